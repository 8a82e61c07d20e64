"""Regression: the standardized GenoTEX pipeline that answers a problem (spec/regression.md).

`answer_problem` loads one problem's data and returns its `RegressionResult`;
`run_problems` answers many, in processes or on a Dask cluster, writing each
result as it finishes. `mode="reference"` is the published pipeline, exactly;
`mode="standard"` (`fit_standard`) is converged, sign-invariant and chooses α
without the answer key by default. The models are scikit-learn estimators (`LassoModel`,
`LMMModel`, `Residualizer`); `cross_validate` chooses α as the reference does.
"""

from ._constants import (
    ALPHA_GRID,
    BATCH_GAP_NUMERATOR,
    FALLBACK_ALPHA,
    LEGACY_SEED,
    N_FOLDS,
    N_TOP_EIGENVALUES,
)
from ._cv import (
    CVChoice,
    Fold,
    cross_validate,
    legacy_fold_indices,
    prediction_scores,
    selection_scores,
    significant_genes,
)
from ._data import ProblemData, ProblemFailed, ProblemSkipped, load_problem, predict_condition
from ._models import (
    LassoModel,
    LMMModel,
    NullModel,
    Residualizer,
    detect_batch_effect,
    estimate_log_delta,
    fit_null_model,
    normalize,
)
from ._pipeline import RegressionResult, analyse, answer_problem, is_done, result_path, write_result
from ._run import ProblemOutcome, run_problems, solve
from ._standard import (
    ALPHA_RATIO,
    N_ALPHAS,
    SELECT_BY,
    STANDARD_TOL,
    StandardFit,
    fit_standard,
    solve_path,
)

__all__ = [
    "ALPHA_GRID",
    "ALPHA_RATIO",
    "N_ALPHAS",
    "SELECT_BY",
    "STANDARD_TOL",
    "StandardFit",
    "fit_standard",
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
    "analyse",
    "answer_problem",
    "cross_validate",
    "detect_batch_effect",
    "estimate_log_delta",
    "fit_null_model",
    "is_done",
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
