"""The package version, in a module of its own so that any module may import it without cycles."""

__version__ = "0.15.2"
