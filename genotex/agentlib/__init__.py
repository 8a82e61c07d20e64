"""The function library GenoAgent's agents read and call (the paper's, in genotex's code).

Each function does one transformation; the decisions are the agent's: which characteristics
row holds the trait, age and gender and how each value converts (functions it writes),
whether identifiers need mapping and with which columns, whether a cohort is usable, which
model to fit. The statistics are the paper's pieces (the normalization, the model classes, the
residualization regressor, the cross-validation tuner), which the Statistician assembles into
a fit. It holds none of genotex's one-call pipelines (no recipe proposal, no whole
cohort, no whole problem): a run over this library measures the model, not genotex.

The harness imports exactly `__all__` into each kernel (`library=paper`, the default), and
the documentation the model sees is generated from these signatures and docstrings.
"""

from ._cohort import (
    geo_link_clinical_genetic_data,
    handle_missing_values,
    judge_and_remove_biased_features,
    preview,
    validate_and_save_cohort_info,
)
from ._geo import (
    apply_gene_mapping,
    geo_get_relevant_filepaths,
    geo_select_clinical_features,
    get_background_and_clinical_data,
    get_gene_annotation,
    get_gene_mapping,
    get_genetic_data,
    get_unique_values_by_row,
    normalize_gene_symbols_in_index,
)

# for the harness, not in `__all__` (the kernel's namespace holds `__all__` only)
from ._kernel import KERNEL_MODULES as KERNEL_MODULES
from ._kernel import kernel_preamble as kernel_preamble
from ._models import (
    LMM,
    Lasso,
    LinearRegression,
    LogisticRegression,
    ResidualizationRegressor,
    normalize_data,
    tune_hyperparameters,
)
from ._statistics import (
    LoadedCohorts,
    detect_batch_effect,
    get_gene_regressors,
    get_known_genes,
    interpret_result,
    save_result,
    select_and_load_cohort,
)
from ._tcga import (
    tcga_convert_age,
    tcga_convert_gender,
    tcga_convert_trait,
    tcga_find_candidate_columns,
    tcga_get_relevant_filepaths,
    tcga_read_cohort,
    tcga_select_clinical_features,
)

#: In the order the generated documentation shows them: a GEO cohort, a TCGA cohort, the
#: cohort's outputs, then the statistics.
__all__ = [
    "geo_get_relevant_filepaths",
    "get_background_and_clinical_data",
    "get_unique_values_by_row",
    "geo_select_clinical_features",
    "get_genetic_data",
    "get_gene_annotation",
    "get_gene_mapping",
    "apply_gene_mapping",
    "normalize_gene_symbols_in_index",
    "tcga_get_relevant_filepaths",
    "tcga_read_cohort",
    "tcga_find_candidate_columns",
    "tcga_convert_trait",
    "tcga_convert_age",
    "tcga_convert_gender",
    "tcga_select_clinical_features",
    "preview",
    "geo_link_clinical_genetic_data",
    "handle_missing_values",
    "judge_and_remove_biased_features",
    "validate_and_save_cohort_info",
    "select_and_load_cohort",
    "LoadedCohorts",
    "get_known_genes",
    "get_gene_regressors",
    "LinearRegression",
    "LogisticRegression",
    "normalize_data",
    "detect_batch_effect",
    "Lasso",
    "LMM",
    "ResidualizationRegressor",
    "tune_hyperparameters",
    "interpret_result",
    "save_result",
]
