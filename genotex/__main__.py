"""`python -m genotex` is the `genotex` command."""

from .cli import main

main()
