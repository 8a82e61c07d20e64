"""A solver's arguments and model roles, checked before any sample runs.

Inspect hands `-S name=value` over as YAML-parsed values (`x` a string, `-1` a number) and
`--model-role name=model` as roles any solver may look up; a value out of range, an
argument a solver does not have, or a role it does not play would otherwise end in a
traceback after the paid calls, or send a role's calls silently to the default model.
Each check raises `PrerequisiteError`, which Inspect prints as its one sentence.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from inspect_ai._util.error import PrerequisiteError

__all__ = [
    "check_boolean",
    "check_choice",
    "check_number",
    "check_roles",
    "check_unknown",
    "check_whole",
]


def _refuse(solver: str, text: str) -> PrerequisiteError:
    return PrerequisiteError(f"genotex/{solver}: {text}")


def check_whole(solver: str, name: str, value: object, lowest: int, highest: int) -> int:
    """`value` as a whole number from `lowest` to `highest`, else one sentence."""
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
        raise _refuse(
            solver,
            f"{name} must be a whole number from {lowest:,} to {highest:,}, not {value!r:.40}",
        )
    return value


def check_number(solver: str, name: str, value: object, lowest: float, highest: float) -> float:
    """`value` as a number above `lowest` and at most `highest`, else one sentence."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(solver, f"{name} must be a number, not {value!r:.40}")
    if not lowest < value <= highest:  # NaN fails this too
        raise _refuse(
            solver, f"{name} must be above {lowest:g} and at most {highest:g}, not {value!r}"
        )
    return float(value)


def check_boolean(solver: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _refuse(solver, f"{name} must be true or false, not {value!r:.40}")
    return value


def check_choice(solver: str, name: str, value: object, choices: Iterable[str]) -> str:
    """`value` as one of `choices`, else one sentence naming them."""
    known = list(choices)
    if not isinstance(value, str) or value not in known:
        raise _refuse(solver, f"{name} must be one of {', '.join(known)}, not {value!r:.40}")
    return value


def check_unknown(solver: str, given: Mapping[str, object], known: Iterable[str]) -> None:
    """An argument the solver does not have (a typo) is refused, naming the closest."""
    names = sorted(known)
    for name in sorted(given):
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise _refuse(
            solver, f"there is no argument {name!r:.40}; the arguments are {', '.join(names)}{hint}"
        )


def check_roles(solver: str, roles: Iterable[str], played: Iterable[str]) -> None:
    """A model role given (`--model-role`) that the solver does not play is refused, naming
    the roles it plays: its calls would otherwise go to the default model unsaid.
    """
    known = sorted(played)
    for role in sorted(set(roles) - set(known)):
        close = difflib.get_close_matches(role, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise _refuse(
            solver,
            f"it plays no model role {role!r:.40}; its roles are {', '.join(known) or 'none'}"
            f"{hint}",
        )
