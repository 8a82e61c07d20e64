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

A saved report is untrusted: every value is read as a short scalar.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._report import EvalReport

__all__ = ["PAPER_SETTING", "RunSetting", "setting_difference", "setting_of"]

#: The task's arguments that decide what an agent faces, in the order they are said.
TASK_FIELDS = ("task", "tcga", "conditions", "time_limit", "message_limit", "tools")
#: A solver's options that decide its budget or its means ("none": the solver has no such
#: option, as the baseline has no library: compatible with any value).
SOLVER_FIELDS = ("library", "cohort_seconds", "time_scale")
SETTING_FIELDS = TASK_FIELDS + SOLVER_FIELDS
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
_DEFAULTS = {"task": "e2e", "time_limit": "3600", "message_limit": "200", "tools": "none"}


def _scalar(value: object) -> str:
    """A recorded value as a short text ("none" for a missing one)."""
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)[:40] if isinstance(value, (str, int, float, bool)) else "?"


@dataclass(frozen=True)
class RunSetting:
    """A run's setting: its values by `SETTING_FIELDS` (None: it records none)."""

    values: tuple[tuple[str, str], ...] | None

    @property
    def paper(self) -> bool:
        """Whether the run is in the paper's setting (a solver without a library or a budget,
        such as the baseline, is in it when the task's arguments are).
        """
        if self.values is None:
            return False
        found = dict(self.values)
        return all(
            found.get(k) == v or (k in SOLVER_FIELDS and found.get(k) == "none")
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
            f"{k}={found.get(k)}"
            for k, v in PAPER_SETTING.items()
            if found.get(k) != v and not (k in SOLVER_FIELDS and found.get(k) == "none")
        ]
        extras = [f"{k}={found.get(k)}" for k, v in _DEFAULTS.items() if found.get(k) != v]
        return " ".join(["paper setting"] * self.paper + differing + extras)

    def compatible(self, other: RunSetting) -> bool:
        """Whether two runs may be ranked together: both known, the task's arguments the same,
        and each solver option the same where both solvers have it.
        """
        if self.values is None or other.values is None:
            return self.values is None and other.values is None
        mine, theirs = dict(self.values), dict(other.values)
        return all(mine.get(k) == theirs.get(k) for k in TASK_FIELDS) and all(
            mine.get(k) == theirs.get(k) or "none" in (mine.get(k), theirs.get(k))
            for k in SOLVER_FIELDS
        )

    def difference(self, other: RunSetting) -> str:
        """What differs from `other`, as "tcga=matched against tcga=all" (or "a setting
        against none recorded").
        """
        if self.values is None or other.values is None:
            return "a recorded setting against none (a plain eval, or an export before 0.11.0)"
        mine, theirs = dict(self.values), dict(other.values)
        for key in SETTING_FIELDS:
            if mine.get(key) != theirs.get(key) and "none" not in (mine[key], theirs[key]):
                return f"{key}={mine.get(key)} against {key}={theirs.get(key)}"
        return "nothing"


def setting_of(report: EvalReport) -> RunSetting:
    """The setting a report records (`run.harness.setting`), or an unknown one."""
    harness = report.run.get("harness")
    setting = harness.get("setting") if isinstance(harness, dict) else None
    if not isinstance(setting, dict):
        return RunSetting(None)
    return RunSetting(tuple((key, _scalar(setting.get(key))) for key in SETTING_FIELDS))


def setting_difference(reports: dict[str, EvalReport]) -> str | None:
    """Why the runs (name -> report) cannot be ranked together, in one sentence, or None when
    every two are of compatible settings (`RunSetting.compatible`).
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
