"""`EvalReport`: the evaluation's results (`ReportData`) with their views as tables.

The data, their aggregates and their JSON form are `ReportData`'s
(`_report_data`); the tables (`_item_tables`) take a `ReportData`, so the
arrows point one way: this module -> the views -> the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._item_tables import report_frame
from ._report_data import ReportData, group_key

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalReport", "group_key"]


class EvalReport(ReportData):
    """Everything one `genotex eval` computed; `None` sections were not requested.

    `preprocessing[subtask]` is `None` when the prediction has no `preprocess/`
    folder at all; `analysis` is empty when it has no `regress/` folder.
    `intervals` maps a `group_key` to each metric's bootstrap interval;
    `diagnosis` is where the points were lost, when asked for (`genotex diagnose`).
    A frozen dataclass (`ReportData`'s fields) with a JSON round trip
    (`to_dict`, `to_json`, `from_dict`).
    """

    def to_frame(self, level: str = "problem") -> pd.DataFrame:
        """A table of the report as a pandas DataFrame, instead of walking the dataclasses.

        `level` is "problem" (a row per analysis problem), "file" (a row per
        preprocessed table), "trait" (DF scores and analysis averages per trait),
        "selection", "average" (every average with its interval and n) or
        "finding". Numbers are unrounded, NaN where undefined; the same rows as
        `genotex eval --csv` writes.
        """
        return report_frame(self, level)
