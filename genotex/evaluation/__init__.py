"""Evaluation: the published GenoTEX metrics over a prediction tree and a reference tree.

`evaluate` scores the three tasks and returns an `EvalReport` (frozen
dataclasses with a JSON round trip); `render_text` and `write_csv_tables`
render it. The per-task functions take guarded trees (`genotex.core.GuardedTree`).
"""

from ._analysis_task import evaluate_analysis, reference_results, score_gene_list, score_result_file
from ._evaluate import TASKS, EvalOptions, evaluate
from ._preprocessing_task import (
    SUBTASKS,
    evaluate_preprocessing,
    reference_csvs,
    score_csv_pair,
    table_similarity,
)
from ._render import format_table, render_text, write_csv_tables
from ._report import (
    OVERALL,
    EvalReport,
    FileScore,
    FilteringScore,
    Finding,
    ProblemScore,
    SelectionScore,
    average,
)
from ._selection_task import evaluate_selection

__all__ = [
    "OVERALL",
    "SUBTASKS",
    "TASKS",
    "EvalOptions",
    "EvalReport",
    "FileScore",
    "FilteringScore",
    "Finding",
    "ProblemScore",
    "SelectionScore",
    "average",
    "evaluate",
    "evaluate_analysis",
    "evaluate_preprocessing",
    "evaluate_selection",
    "format_table",
    "reference_csvs",
    "reference_results",
    "render_text",
    "score_csv_pair",
    "score_gene_list",
    "score_result_file",
    "table_similarity",
    "write_csv_tables",
]
