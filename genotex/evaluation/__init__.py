"""Evaluation: the published GenoTEX metrics over a prediction tree and a reference tree.

`evaluate` scores the three tasks and returns an `EvalReport` (frozen
dataclasses with a JSON round trip); `render_text`, `write_csv_tables` and
`write_report` (HTML) render it. Beside the parity numbers, on request:
bootstrap intervals (`EvalOptions(ci=True)`), exact AUROC / average precision
and GSEA prerank (`EvalOptions(exact=True)`), paired comparisons of two saved
reports (`compare_reports`), the paper's leaderboard (`leaderboard`), and a
provenance block in every report.
"""

from ._analysis_task import (
    GeneListScores,
    Lists,
    evaluate_analysis,
    reference_results,
    score_gene_list,
    score_result_file,
)
from ._common import Progress, no_progress
from ._compare import (
    Comparison,
    ReportError,
    SettingsDiffer,
    compare_reports,
    comparison_to_dict,
    load_report,
    render_comparison,
)
from ._diagnosis import (
    ERROR_CLASSES,
    REFERENCE_CAUSES,
    STAGES,
    Collected,
    Diagnosis,
    DiagnosisError,
    DiagnosisFinding,
    ProblemDiagnosis,
    StageAverage,
    compare_diagnoses,
    diagnosis_frames,
    error_class_histogram,
    load_diagnosis,
    render_diagnosis,
    render_diagnosis_comparison,
    stage_shares,
    write_diagnosis_csv,
)
from ._diagnosis import collect as collect_findings
from ._diagnosis import finish as finish_diagnosis
from ._evaluate import TASKS, EvalOptions, check_output_trees, evaluate
from ._figure_files import (
    DEFAULT_DPI,
    FIGURE_FORMATS,
    figure_format_of,
    write_diagnosis_figure,
)
from ._html import render_html, write_report
from ._html_runs import write_runs_report
from ._isolation import ISOLATED_SANDBOXES, not_isolated, reached_pipeline
from ._item_tables import FRAME_LEVELS, item_tables, report_frame, write_csv_tables
from ._leaderboard import Leaderboard, leaderboard, published_rows
from ._leaderboard_render import leaderboard_notes, render_leaderboard
from ._preprocessing_task import (
    SUBTASKS,
    evaluate_preprocessing,
    reference_csvs,
    score_csv_pair,
    table_similarity,
)
from ._provenance import file_sha256, provenance, tree_digest
from ._render import format_table, render_text
from ._report import EvalReport
from ._scores import (
    EXTRA_ANALYSIS_METRICS,
    OVERALL,
    FileScore,
    FilteringScore,
    Finding,
    ProblemScore,
    SelectionScore,
    average,
)
from ._selection_task import evaluate_selection
from ._setting import NOT_AN_OPTION, RunSetting, canonical_value, setting_difference, setting_of
from ._statistics import (
    DEFAULT_BOOTSTRAP,
    BootstrapSettings,
    Interval,
    PairedComparison,
    bootstrap_interval,
    exact_ranking_scores,
    paired_comparison,
)
from ._uncertainty import add_exact_statistics, add_intervals, gsea_prerank
from ._validate import SubmissionCheck, SubmissionFinding, validate_submission

__all__ = [
    "NOT_AN_OPTION",
    "RunSetting",
    "canonical_value",
    "setting_difference",
    "setting_of",
    "ERROR_CLASSES",
    "REFERENCE_CAUSES",
    "STAGES",
    "Collected",
    "Diagnosis",
    "DiagnosisError",
    "DiagnosisFinding",
    "ProblemDiagnosis",
    "Progress",
    "StageAverage",
    "check_output_trees",
    "collect_findings",
    "compare_diagnoses",
    "diagnosis_frames",
    "figure_format_of",
    "error_class_histogram",
    "finish_diagnosis",
    "load_diagnosis",
    "no_progress",
    "render_diagnosis",
    "render_diagnosis_comparison",
    "stage_shares",
    "write_diagnosis_csv",
    "write_diagnosis_figure",
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_DPI",
    "FIGURE_FORMATS",
    "EXTRA_ANALYSIS_METRICS",
    "FRAME_LEVELS",
    "ISOLATED_SANDBOXES",
    "OVERALL",
    "SUBTASKS",
    "TASKS",
    "BootstrapSettings",
    "Comparison",
    "EvalOptions",
    "EvalReport",
    "FileScore",
    "FilteringScore",
    "Finding",
    "Interval",
    "Leaderboard",
    "Lists",
    "PairedComparison",
    "ProblemScore",
    "ReportError",
    "SettingsDiffer",
    "SelectionScore",
    "add_exact_statistics",
    "add_intervals",
    "average",
    "bootstrap_interval",
    "compare_reports",
    "validate_submission",
    "SubmissionCheck",
    "SubmissionFinding",
    "comparison_to_dict",
    "evaluate",
    "evaluate_analysis",
    "evaluate_preprocessing",
    "evaluate_selection",
    "exact_ranking_scores",
    "file_sha256",
    "format_table",
    "gsea_prerank",
    "leaderboard",
    "load_report",
    "paired_comparison",
    "provenance",
    "published_rows",
    "leaderboard_notes",
    "not_isolated",
    "reached_pipeline",
    "reference_csvs",
    "reference_results",
    "render_comparison",
    "render_html",
    "render_leaderboard",
    "render_text",
    "score_csv_pair",
    "GeneListScores",
    "score_gene_list",
    "score_result_file",
    "table_similarity",
    "tree_digest",
    "write_csv_tables",
    "item_tables",
    "report_frame",
    "write_report",
    "write_runs_report",
]
