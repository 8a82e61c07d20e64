"""The setting a harness run ran in, read from its saved report: what must be the same for two
runs to be ranked together, and whether it is the paper's.

`genotex harness export` records in `run.harness.setting` the task and its arguments that
change what an agent faces (`tcga`: every Xena folder or the matched one; `conditions`:
the condition traits' raw inputs or their preprocessed data; `time_limit`,
`message_limit`, `tools`) and the solver's options that change its budget or its means
(`library`, `cohort_seconds`, `time_scale`), and in `run.harness.budget` what that
budget came to (the resolved time-scale factor, the seconds of a workflow). A report
that records none (a plain `eval --json`, an export made before 0.11.0) is of an
unknown setting: never ranked as the paper's, and never beside a known one.

Settings are compared whole. Each value is canonicalised, never cut: a text is itself, a
number its shortest form (420.0 is 420), true/false/null themselves, a list or object its
canonical JSON. A field the report does not record is *unknown*: it is never the paper's
value and equals nothing, not even another unknown. `null` equals only `null`. The one
value that matches any other is `NOT_AN_OPTION`, which an export since 0.15 records for a
solver option the solver does not have (the baseline has no `library`). A saved report is
untrusted: values are read, never run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..core import printable
from ._report import EvalReport

__all__ = [
    "NOT_AN_OPTION",
    "PAPER_SETTING",
    "RunSetting",
    "canonical_value",
    "setting_difference",
    "setting_of",
]

#: The task's arguments that decide what an agent faces, in the order they are said.
TASK_FIELDS = ("task", "tcga", "conditions", "time_limit", "message_limit", "tools")
#: A solver's options that decide its budget or its means.
SOLVER_FIELDS = ("library", "cohort_seconds", "time_scale")
SETTING_FIELDS = TASK_FIELDS + SOLVER_FIELDS
#: What an export records for a solver option its solver does not have (the baseline has
#: no library and no budget): compatible with any value of that option.
NOT_AN_OPTION = "not an option of the solver"
#: A field a report does not record.
UNKNOWN = "unknown"
#: The paper's setting: every TCGA folder and the conditions' raw inputs given, GenoAgent
#: on the paper's function library with its published budget (420 s a cohort, by the model).
PAPER_SETTING = {
    "tcga": "all",
    "conditions": "raw",
    "library": "paper",
    "cohort_seconds": "420",
    "time_scale": "auto",
}
#: The tasks' own defaults of the other arguments, not said in a label when they hold.
_DEFAULTS = {"task": "e2e", "time_limit": "3600", "message_limit": "200", "tools": "null"}


def canonical_value(value: object) -> str:
    """A recorded value as one canonical text, whole: equal texts mean equal values.

    A text stays itself; a finite number is its shortest form (an integral float as the
    integer); true, false and null are themselves; anything else (a list, an object, a
    number that is not finite) is its canonical JSON (keys sorted, no spaces).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


@dataclass(frozen=True)
class RunSetting:
    """A run's setting: its canonical values by `SETTING_FIELDS` (`UNKNOWN` for a field it
    does not record), or None when it records no setting at all.
    """

    values: tuple[tuple[str, str], ...] | None

    @property
    def paper(self) -> bool:
        """Whether the run is in the paper's setting: each of the paper's fields recorded with
        its value (a solver option the solver does not have, as the baseline's library,
        counts as the paper's).
        """
        if self.values is None:
            return False
        found = dict(self.values)
        return all(
            found[k] == v or (k in SOLVER_FIELDS and found[k] == NOT_AN_OPTION)
            for k, v in PAPER_SETTING.items()
        )

    @property
    def label(self) -> str:
        """The setting as a table's group says it: "paper setting", or what differs from the
        paper's (and from the tasks' defaults), e.g. "tcga=matched conditions=given".
        """
        if self.values is None:
            return "setting unknown"
        found = dict(self.values)
        differing = [
            f"{k}={_shown(found[k])}"
            for k, v in PAPER_SETTING.items()
            if found[k] != v and not (k in SOLVER_FIELDS and found[k] == NOT_AN_OPTION)
        ]
        extras = [f"{k}={_shown(found[k])}" for k, v in _DEFAULTS.items() if found[k] != v]
        return " ".join(["paper setting"] * self.paper + differing + extras)

    def differing(self, other: RunSetting) -> list[str]:
        """Every field in which two known settings differ, as "time_limit=3600 against
        time_limit=20000", in `SETTING_FIELDS` order: a field unknown on either side, values
        that are not equal (a solver option one solver does not have matches any value).
        """
        assert self.values is not None and other.values is not None
        mine, theirs = dict(self.values), dict(other.values)
        found = []
        for key in SETTING_FIELDS:
            a, b = mine[key], theirs[key]
            if key in SOLVER_FIELDS and NOT_AN_OPTION in (a, b) and UNKNOWN not in (a, b):
                continue
            if a != b or a == UNKNOWN:
                found.append(f"{key}={_shown(a)} against {key}={_shown(b)}")
        return found

    def compatible(self, other: RunSetting) -> bool:
        """Whether two runs may be ranked together: both of no recorded setting, or both
        known and differing in no field (`differing`).
        """
        if self.values is None or other.values is None:
            return self.values is None and other.values is None
        return not self.differing(other)

    def difference(self, other: RunSetting) -> str:
        """Every field that differs from `other` ("tcga=matched against tcga=all; time_limit=
        3600 against time_limit=20000"), or that one records a setting and the other none.
        """
        if self.values is None or other.values is None:
            return "a recorded setting against none (a plain eval, or an export before 0.11.0)"
        return "; ".join(self.differing(other)) or "nothing"


def _shown(value: str) -> str:
    """A canonical value as a sentence shows it: whole, what is not printable escaped."""
    return printable(value)


def setting_of(report: EvalReport) -> RunSetting:
    """The setting a report records (`run.harness.setting`), or an unknown one."""
    harness = report.run.get("harness")
    setting = harness.get("setting") if isinstance(harness, dict) else None
    if not isinstance(setting, dict):
        return RunSetting(None)
    return RunSetting(
        tuple(
            (key, canonical_value(setting[key]) if key in setting else UNKNOWN)
            for key in SETTING_FIELDS
        )
    )


def setting_difference(reports: dict[str, EvalReport]) -> str | None:
    """Why the runs (name -> report) cannot be ranked together, in one sentence naming every
    field that differs, or None when every two are of compatible settings
    (`RunSetting.compatible`).
    """
    named = [(name, setting_of(report)) for name, report in reports.items()]
    for index, (first_name, first) in enumerate(named):
        for name, setting in named[index + 1 :]:
            if not setting.compatible(first):
                return (
                    f"{name} and {first_name} ran in different settings ({setting.label}; "
                    f"{first.label}: {setting.difference(first)}), so they cannot be ranked "
                    "together"
                )
    return None
