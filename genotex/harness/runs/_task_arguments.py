"""A task's arguments (`-T name=value`), checked into one sentence each before any sample runs.

Inspect hands `-T` values over YAML-parsed: `limit=x` is text, `root=2024` a number, `-1`
a number that would silently drop a trait from a slice.
"""

from __future__ import annotations

from ...core import GenotexError

__all__ = ["checked_arguments"]


def _text_argument(name: str, value: object, *, optional: bool = True) -> str | None:
    """A text argument as text: YAML hands `-T root=2024` over as a number."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise GenotexError(f"{name} must be text, not {value!r:.60}")
    return str(value)


def _limit_argument(name: str, value: object, highest: int) -> int | None:
    """A whole-number argument from 1 to `highest` (None: no limit), else one sentence."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= highest:
        raise GenotexError(
            f"{name} must be a whole number from 1 to {highest:,}, not {value!r:.40}"
        )
    return value


def checked_arguments(  # noqa: PLR0913, PLR0917 - a task's arguments, as Inspect gives them
    root: object,
    reference: object,
    traits: object,
    limit: object,
    sandbox: object,
    time_limit: object,
    message_limit: object,
    tools: object,
    max_output_mb: object,
    image: object,
    tcga: object = "all",
    conditions: object = "raw",
) -> tuple[str, str | None, list[str]]:
    """Every task argument checked before any sample runs, one sentence each (`-T` values
    arrive YAML-parsed: `limit=x` is text, `root=2024` a number); returns the root, the
    reference and the traits asked for.
    """
    if root is None:
        raise GenotexError("the benchmark root is not given: -T root=BENCH")
    checked_root = _text_argument("root", root, optional=False)
    assert checked_root is not None
    checked_reference = _text_argument("reference", reference)
    # `-T traits=A,B` reaches a task as a list; the Python API may pass "A,B"; -T traits=123
    # a number
    if isinstance(traits, (list, tuple)):
        listed = [_text_argument("traits", t, optional=False) or "" for t in traits]
    else:
        text = _text_argument("traits", traits)
        listed = text.split(",") if text is not None else []
        if text is not None and not any(t.strip() for t in listed):
            raise GenotexError("traits is empty: name at least one trait, or leave it out")
    _limit_argument("limit", limit, 1_000_000)
    _limit_argument("time_limit", time_limit, 30 * 24 * 3600)
    _limit_argument("message_limit", message_limit, 1_000_000)
    _limit_argument("max_output_mb", max_output_mb, 1_000_000)
    _text_argument("sandbox", sandbox)
    _text_argument("image", image)
    if tools not in (None, "", "none", "genotex"):
        raise GenotexError(f"tools must be genotex or none, not {tools!r:.40}")
    if tcga not in ("all", "matched"):
        raise GenotexError(f"tcga must be all or matched, not {tcga!r:.40}")
    if conditions not in ("raw", "given"):
        raise GenotexError(f"conditions must be raw or given, not {conditions!r:.40}")
    return checked_root, checked_reference, [t.strip() for t in listed if t.strip()]
