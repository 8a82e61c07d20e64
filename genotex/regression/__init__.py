"""Regression: the standardized GenoTEX pipeline that answers a problem (spec/regression.md).

`answer_problem` loads one problem's data and returns its `RegressionResult`;
`run_problems` answers many, in processes or on a Dask cluster, writing each
result as it finishes. `mode="reference"` is the published pipeline, exactly;
`mode="standard"` (`fit_standard`) is exact, sign-invariant, imports no scikit-learn and chooses α
without the answer key by default. The models are scikit-learn estimators (`LassoModel`,
`LMMModel`, `Residualizer`); `cross_validate` chooses α as the reference does.
"""

from ..core import lazy_names
from ._blas import BlasThreadWarning, one_blas_thread
from ._constants import (
    ALPHA_GRID,
    BATCH_GAP_NUMERATOR,
    FALLBACK_ALPHA,
    LEGACY_SEED,
    N_FOLDS,
    N_TOP_EIGENVALUES,
)
from ._data import ProblemData, ProblemFailed, ProblemSkipped, load_problem, predict_condition
from ._gene_files import gene_table_path, write_gene_tables
from ._gene_table import (
    MARGINAL_COLUMNS,
    MODERATED_COLUMNS,
    gene_table,
    marginal_statistics,
    moderated_statistics,
    selection_frequency,
)
from ._homotopy import HomotopyFailed, PathPoint, lasso_path
from ._kept import is_done, why_redo
from ._numerics import (
    detect_batch_effect,
    estimate_log_delta,
    legacy_fold_indices,
    mean_scores,
    normalize,
    prediction_scores,
    selection_scores,
    significant_genes,
)
from ._paths import STANDARD_TOL, SolvedPath, exact_path, solve_path
from ._pipeline import RegressionResult, analyse, answer_problem, result_path, write_result
from ._run import ProblemOutcome, run_problems, solve
from ._standard import ALPHA_RATIO, N_ALPHAS, SELECT_BY, SOLVER, StandardFit, fit_standard

#: The reference mode's scikit-learn estimators, imported when first used (PEP 562), so that
#: `--mode standard` never pays scikit-learn's import (~1.3 s, more than its solver takes).
_LAZY = {
    "CVChoice": "._cv",
    "Fold": "._cv",
    "cross_validate": "._cv",
    "LMMModel": "._models",
    "LassoModel": "._models",
    "NullModel": "._models",
    "Residualizer": "._models",
    "StandardModel": "._models",
    "fit_null_model": "._models",
    "GeneAnalysis": "._in_memory",
    "DroppedSamplesWarning": "._table_columns",
    "DesignWarning": "._design",
    "SmallSampleWarning": "._table_columns",
    "frequency_plot": "._plots",
    "volcano_plot": "._plots",
    "linked_frame": "._in_memory",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "MODERATED_COLUMNS",
    "moderated_statistics",
    "gene_table",
    "gene_table_path",
    "write_gene_tables",
    "frequency_plot",
    "volcano_plot",
    "GeneAnalysis",
    "DroppedSamplesWarning",
    "DesignWarning",
    "SmallSampleWarning",
    "MARGINAL_COLUMNS",
    "linked_frame",
    "marginal_statistics",
    "selection_frequency",
    "ALPHA_GRID",
    "BlasThreadWarning",
    "one_blas_thread",
    "ALPHA_RATIO",
    "N_ALPHAS",
    "SELECT_BY",
    "SOLVER",
    "STANDARD_TOL",
    "HomotopyFailed",
    "PathPoint",
    "SolvedPath",
    "StandardFit",
    "lasso_path",
    "mean_scores",
    "fit_standard",
    "exact_path",
    "solve_path",
    "BATCH_GAP_NUMERATOR",
    "FALLBACK_ALPHA",
    "LEGACY_SEED",
    "N_FOLDS",
    "N_TOP_EIGENVALUES",
    "CVChoice",
    "Fold",
    "LMMModel",
    "LassoModel",
    "NullModel",
    "ProblemData",
    "ProblemFailed",
    "ProblemOutcome",
    "ProblemSkipped",
    "RegressionResult",
    "Residualizer",
    "StandardModel",
    "analyse",
    "answer_problem",
    "cross_validate",
    "detect_batch_effect",
    "estimate_log_delta",
    "fit_null_model",
    "is_done",
    "why_redo",
    "legacy_fold_indices",
    "load_problem",
    "normalize",
    "predict_condition",
    "prediction_scores",
    "result_path",
    "run_problems",
    "selection_scores",
    "significant_genes",
    "solve",
    "write_result",
]
