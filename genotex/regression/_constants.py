"""The regression pipeline's fixed numbers (regression.md), named once.

They are the reference's, and parity depends on every one of them.
"""

#: Cross-validation folds (regression.md § 5).
N_FOLDS = 5
#: The reference seeds NumPy's legacy global generator with 42 before shuffling the samples,
#: and gives the two-step condition model `random_state=42`.
LEGACY_SEED = 42
#: The penalties tried by cross-validation, smallest first (ties keep the first).
ALPHA_GRID: tuple[float, ...] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: Used when no α selects any known gene (best mean selection precision ≤ 0).
FALLBACK_ALPHA = 0.1
#: A batch effect is declared when a gap between normalized top eigenvalues exceeds this / n.
BATCH_GAP_NUMERATOR = 200.0
#: How many of the largest eigenvalues of X0·X0ᵀ the batch test looks at.
N_TOP_EIGENVALUES = 10
#: The LMM's variance-ratio search: grid intervals over log δ, and the range of log δ.
LOG_DELTA_INTERVALS = 500
LOG_DELTA_RANGE = (-5.0, 5.0)

#: Which model answers a problem: the batch-effect test's choice ("auto", the published
#: pipeline's), or the plain Lasso or LMM whatever the test says (the paper's Table 3 rows).
MODEL_CHOICES = ("auto", "lasso", "lmm")


def check_model(model: object) -> str:
    """A model choice, or ValueError naming the choices."""
    if model not in MODEL_CHOICES:
        raise ValueError(f"model must be one of {', '.join(MODEL_CHOICES)}, not {model!r:.40}")
    return str(model)


def forced_lmm(model: str) -> bool | None:
    """The model a choice forces: True (LMM), False (Lasso), None (the batch test decides)."""
    return None if check_model(model) == "auto" else model == "lmm"
