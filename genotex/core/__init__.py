"""The core every stage may use: names and layout, file schemas, tables, metrics, errors.

Nothing here imports a stage (preprocessing, regression, evaluation) or
scikit-learn / SciPy, so evaluation stays light.

- Layout and names: `ProblemId`, `CATEGORIES`, `check_safe_name`, `normalize_trait_name`,
  `regress_file_name`, `condition_from_regress_file`, `trait_label`.
- File schemas, one class per format with its read and write: `TaskInfo`
  (`task_info.json`), `CohortInfo` and `CohortRecord` (`cohort_info.json`),
  `ResultFile` (`significant_genes_condition_<C>.json`), `RunStatus` (`status.json`),
  `BenchmarkMarker` (`genotex-benchmark.json`, what a download of the benchmark fetched).
- Cohort selection: `CohortInfoReader`, `select_cohorts`, `usable_cohorts`, `gene_regressors`.
- Untrusted trees: `GuardedTree`, `RejectedFile`, `MISSING`.
- Tables: `LabelledTable`, `read_table`, `read_header`, `write_table`; the content-keyed
  `TableCache` of parsed tables (`cache_folder`, `parse_size`).
- Metrics: `gene_selection_scores`, `approximate_auroc`, `gsea_enrichment_score`,
  `confusion_scores`, `jaccard`, `feature_correlation`, `nanmean`, the registry `METRICS`.
- Plumbing: `atomic_output`, `write_text_atomic`, `ordered_map`, the errors.
"""

from ._anndata import (
    CLINICAL_COLUMNS,
    anndata_to_linked,
    cohort_label,
    is_anndata,
    linked_to_anndata,
)
from ._atomic import (
    WriteError,
    atomic_output,
    locked_folder,
    remove_stale_temporaries,
    write_text_atomic,
)
from ._blank import blank_as_missing
from ._cache import (
    CACHE_ENV,
    CACHE_SIZE_ENV,
    DEFAULT_CACHE_BYTES,
    CacheInfo,
    TableCache,
    cache_folder,
    parse_size,
)
from ._cohort_info import CohortInfo, CohortRecord
from ._csv_cells import csv_text, safe_cell
from ._digest import DigestMemo, file_sha256, tree_digest_of
from ._errors import (
    GenotexError,
    PredictionTreeError,
    ReferenceTreeError,
    TaskInfoError,
    UnsafeNameError,
    extra_hint,
)
from ._json import (
    finite_or_none,
    json_text,
    open_regular,
    parse_json,
    read_json,
    read_regular_bytes,
)
from ._layout import (
    CATEGORIES,
    MAX_PATH_CHARS,
    ProblemId,
    category_of,
    check_relative,
    check_safe_name,
    condition_from_regress_file,
    is_one_step,
    metadata_beside,
    normalize_trait_name,
    output_path,
    prepare_output_folder,
    regress_file_name,
    trait_label,
)
from ._lazy import lazy_names
from ._marker import (
    MARKER_NAME,
    BenchmarkMarker,
    MarkerError,
    benchmark_summary,
    file_digest,
    find_marker,
)
from ._memory import empty_without_huge_pages
from ._method import (
    MODES,
    SELECT_BY,
    AlphaGrid,
    Method,
    Mode,
    ReferenceMethod,
    SelectBy,
    SolverFallback,
    StandardMethod,
    check_mode,
    check_select_by,
    method_from_dict,
)
from ._metric_registry import (
    ANALYSIS_METRICS,
    FILTERING_METRICS,
    METRICS,
    PREPROCESSING_METRICS,
    Aggregation,
    Direction,
    MetricSpec,
    Origin,
    Scale,
    get_metric,
    metric_values,
)
from ._metrics import (
    GSEA_UNIVERSE,
    approximate_auroc,
    confusion_scores,
    feature_correlation,
    gene_selection_scores,
    gsea_enrichment_score,
    jaccard,
    nanmean,
)
from ._notebook import HTML_BYTES, REPR_CHARS, clipped, notebook_table
from ._outcome import OUTCOME_KINDS, Outcome, OutcomeKind
from ._parallel import (
    dask_client,
    dask_map,
    ordered_map,
    stop_pool,
    temporary_environment,
)
from ._reference_guard import ReferenceTargetError, known_references, refuse_reference_target
from ._result import MalformedResult, ResultFile
from ._selection import (
    CohortInfoReader,
    Selection,
    gene_regressors,
    linked_header,
    select_cohorts,
    selected_cohorts,
    two_step_pairs,
    usable_cohorts,
)
from ._status import ProblemStatus, RunStatus, StatusError
from ._tables import (
    MAX_COLUMNS,
    PANDAS_NA_VALUES,
    LabelledTable,
    TableError,
    read_header,
    read_table,
    write_table,
)
from ._task_info import TaskInfo, closest_name, load_task_info
from ._untrusted import DEFAULT_MAX_FILE_MB, MISSING, GuardedTree, RejectedFile
from ._write_gate import gate_write, generates_benchmark, making_reference

__all__ = [
    "gate_write",
    "generates_benchmark",
    "making_reference",
    "blank_as_missing",
    "extra_hint",
    "HTML_BYTES",
    "REPR_CHARS",
    "clipped",
    "notebook_table",
    "CLINICAL_COLUMNS",
    "anndata_to_linked",
    "cohort_label",
    "is_anndata",
    "linked_to_anndata",
    "CACHE_ENV",
    "CACHE_SIZE_ENV",
    "DEFAULT_CACHE_BYTES",
    "CacheInfo",
    "DigestMemo",
    "TableCache",
    "cache_folder",
    "parse_size",
    "MAX_COLUMNS",
    "ANALYSIS_METRICS",
    "CATEGORIES",
    "DEFAULT_MAX_FILE_MB",
    "FILTERING_METRICS",
    "GSEA_UNIVERSE",
    "METRICS",
    "MISSING",
    "MODES",
    "SELECT_BY",
    "AlphaGrid",
    "Method",
    "Mode",
    "ReferenceMethod",
    "SelectBy",
    "SolverFallback",
    "StandardMethod",
    "check_mode",
    "check_select_by",
    "closest_name",
    "method_from_dict",
    "OUTCOME_KINDS",
    "PANDAS_NA_VALUES",
    "PREPROCESSING_METRICS",
    "CohortInfo",
    "CohortInfoReader",
    "CohortRecord",
    "GenotexError",
    "MARKER_NAME",
    "BenchmarkMarker",
    "MarkerError",
    "benchmark_summary",
    "file_digest",
    "find_marker",
    "known_references",
    "refuse_reference_target",
    "ReferenceTargetError",
    "GuardedTree",
    "LabelledTable",
    "MalformedResult",
    "Aggregation",
    "Direction",
    "MetricSpec",
    "Origin",
    "Scale",
    "metric_values",
    "Outcome",
    "OutcomeKind",
    "PredictionTreeError",
    "ProblemId",
    "ProblemStatus",
    "ReferenceTreeError",
    "RejectedFile",
    "ResultFile",
    "RunStatus",
    "Selection",
    "StatusError",
    "TableError",
    "TaskInfo",
    "TaskInfoError",
    "UnsafeNameError",
    "approximate_auroc",
    "WriteError",
    "atomic_output",
    "locked_folder",
    "category_of",
    "MAX_PATH_CHARS",
    "check_relative",
    "check_safe_name",
    "condition_from_regress_file",
    "confusion_scores",
    "feature_correlation",
    "empty_without_huge_pages",
    "file_sha256",
    "tree_digest_of",
    "gene_regressors",
    "gene_selection_scores",
    "get_metric",
    "gsea_enrichment_score",
    "is_one_step",
    "jaccard",
    "linked_header",
    "load_task_info",
    "nanmean",
    "normalize_trait_name",
    "output_path",
    "prepare_output_folder",
    "csv_text",
    "safe_cell",
    "metadata_beside",
    "dask_client",
    "dask_map",
    "ordered_map",
    "stop_pool",
    "temporary_environment",
    "read_header",
    "read_table",
    "regress_file_name",
    "trait_label",
    "remove_stale_temporaries",
    "select_cohorts",
    "selected_cohorts",
    "two_step_pairs",
    "usable_cohorts",
    "write_table",
    "write_text_atomic",
    "finite_or_none",
    "lazy_names",
    "json_text",
    "open_regular",
    "parse_json",
    "read_json",
    "read_regular_bytes",
]
