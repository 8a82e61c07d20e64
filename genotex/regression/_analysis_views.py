"""What a fitted `GeneAnalysis` shows: its tables, its figures and its summary.

Kept apart from the estimation (`_in_memory`): these read the fitted attributes only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ._pipeline import RegressionResult

__all__ = ["AnalysisViews"]


class AnalysisViews:
    """The views of a fitted analysis, mixed into `GeneAnalysis` (which sets what they read)."""

    trait: str
    condition: str | None
    groups: str | None
    design: str | None
    continuous: bool
    mode: str
    coefficients_: tuple[str, ...]
    design_columns_: list[str]
    condition_number_: float
    covariates_dropped_: dict[str, str]
    samples_fitted_: int
    samples_dropped_: int
    samples_dropped_by_: dict[str, int]
    residual_df_: int
    few_samples_: bool
    log2_: bool
    result_: RegressionResult
    _tables: dict[str, pd.DataFrame]

    _covariates: Callable[[], list[str]]

    def plot(self, kind: str = "volcano", coef: str | None = None, **options: Any) -> Figure:
        """The table's figure: "volcano" (`volcano_plot`, of `coef`'s tests: by default the
        first tested) or "frequency" (`frequency_plot`).
        """
        from ._plots import frequency_plot, volcano_plot

        if kind == "volcano":
            name = coef or self._fitted().coefficients_[0]
            given = {"adjusted_for": self._adjusted_for(name), "log2": self.log2_,
                     "title": self._title(f"genes by marginal test of {name}"),
                     "effect_label": self._effect_label(name)}  # fmt: skip
            return volcano_plot(self.to_frame(coef=name), **{**given, **options})
        if kind == "frequency":
            given = {"title": self._title("selection frequency")}
            return frequency_plot(self.to_frame(), **{**given, **options})
        raise ValueError(f"unknown plot {kind!r}; choose volcano or frequency")

    def _adjusted_for(self, name: str) -> list[str]:
        """The design's other columns the effect of `name` is adjusted for."""

        def own(column: str) -> bool:  # the trait's own columns: its levels compared
            return column == self.trait or column.startswith(f"{self.trait}[")

        return [c for c in self.design_columns_[1:] if c != name and not own(c)]

    def _effect_label(self, name: str) -> str | None:
        """The volcano's x axis for a coefficient other than a binary trait's (None: that)."""
        if " - " in name:
            return f"marginal effect: {name} difference of means"
        if name != self.trait:
            return f"marginal effect: coefficient of {name}"
        if self.continuous:
            return f"marginal effect: slope, change per unit of {self.trait}"
        return None

    def _design_text(self) -> str:
        """The design as a formula: the one given, or the trait and what it is adjusted for."""
        if self.design is not None:
            return " ".join(str(self.design).split())
        terms = [self.trait, *([self.condition] if self.condition else []), *self._covariates()]
        within = f", within {self.groups}" if self.groups else ""
        return "~ " + " + ".join(terms) + within

    def _title(self, what: str) -> str:
        """A figure's title: the trait, the condition (or none), the cohort, the design and
        what it shows.
        """
        condition = f" given {self.condition}" if self.condition else ""
        cohort = getattr(self, "cohort_label_", "in-memory")
        return f"{self.trait}{condition} · {cohort} · {self._design_text()}: {what}"

    def _fitted(self) -> Self:
        if not hasattr(self, "statistics_"):
            raise ValueError("fit the analysis first")
        return self

    def to_frame(self, coef: str | None = None) -> pd.DataFrame:
        """Every gene: the model's `coefficient`, `selected`, `rank`, `frequency`, and the
        marginal `effect`, `se`, `t`, `p_value`, `fdr` of `coef` (one of `coefficients_`; by
        default the first), and `untested`: why a gene has no test (constant, explained by a
        covariate, fitted exactly), empty for those tested.
        """
        fitted = self._fitted()
        name = coef if coef is not None else fitted.coefficients_[0]
        if name not in fitted._tables:
            raise ValueError(f"coef {name!r} was not tested: the fit tested "
                             f"{', '.join(map(repr, fitted.coefficients_))} (ask for it with "
                             "GeneAnalysis(..., coef=...))")  # fmt: skip
        return fitted._tables[name].copy()

    def summary(self) -> str:
        """The fit in a few lines: the design and its condition number, the samples, what was
        left out, the residual degrees of freedom, the model, and each coefficient tested.
        """
        fitted = self._fitted()
        cohort = getattr(self, "cohort_label_", "in-memory")
        lines = [f"{self.trait} · {cohort}: {self._design_text()} ({self.mode} mode)"]
        dropped = "; ".join(f"{n} for {k}" for k, n in self.samples_dropped_by_.items())
        lines.append(f"samples fitted: {self.samples_fitted_}" + (f" ({self.samples_dropped_} left "
                     f"out: {dropped})" if self.samples_dropped_ else ""))  # fmt: skip
        lines.append(f"design: {len(self.design_columns_)} columns "
                     f"({', '.join(self.design_columns_)}); condition number "
                     f"{self.condition_number_:.3g}")  # fmt: skip
        for name, why in self.covariates_dropped_.items():
            lines.append(f"left out of the design: {name} ({why})")
        lines.append(f"residual degrees of freedom: {self.residual_df_}"
                     + (" (few: flagged)" if self.few_samples_ else ""))  # fmt: skip
        described = self.result_.describe().splitlines()[0]
        lines.append(f"model: {described.split('; ', 1)[-1]}")  # the cohort is said above
        scores = self.result_.cv_performance.get("prediction", {})
        if scores:
            shown = ", ".join(f"{k} {v:.3g}" for k, v in scores.items() if k != "mse")
            lines.append(f"cross-validated prediction: {shown}")
        for name in fitted.coefficients_:
            table = fitted._tables[name]
            passing = int((table["fdr"] < 0.05).sum())
            lines.append(f"{name}: {passing} of {int(table['t'].notna().sum())} genes tested at "
                         "BH FDR 5%")  # fmt: skip
        return "\n".join(lines)
