"""The guides' model placeholder, `PROVIDER/MODEL`, refused in one sentence before any sample.

Left as printed, Inspect found no model API named `PROVIDER` and ended in a 213-line
traceback. Registered as a model API of its own (genotex's Inspect entry point loads it),
it refuses with Inspect's `PrerequisiteError`, which Inspect prints as one message.
"""

from __future__ import annotations

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import modelapi

__all__ = ["placeholder_model"]

#: What to write instead of the placeholder (the docs' worked examples use these).
_EXAMPLES = "openai/gpt-4o or anthropic/claude-sonnet-4-0, with its API key set"


@modelapi(name="PROVIDER")
def placeholder_model() -> type:
    """The placeholder's model API: refuses to be made, saying what to write instead."""
    raise PrerequisiteError(
        f"PROVIDER/MODEL is the guides' placeholder: name a model such as {_EXAMPLES} "
        "(genotex doctor lists the providers whose SDK is installed here)"
    )
