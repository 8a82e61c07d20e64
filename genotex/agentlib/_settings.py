"""What a run allows the library: set by the harness's kernel preamble, not by the agent."""

__all__ = ["allow_lmm", "lmm_allowed"]

_ALLOWED = {"lmm": True}


def allow_lmm(allowed: bool) -> None:
    """Under GenoAgent's `batch_effect_correction=false` (Table 3's "No BEC") the preamble
    calls `allow_lmm(False)`: `LMM`, and `ResidualizationRegressor` and
    `tune_hyperparameters` given it, then refuse the linear mixed model.
    """
    _ALLOWED["lmm"] = bool(allowed)


def lmm_allowed() -> bool:
    """Whether the linear mixed model may be fitted in this kernel."""
    return _ALLOWED["lmm"]
