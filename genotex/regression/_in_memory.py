"""Answers on in-memory data: a problem from a linked table or an AnnData, no folders needed.

`GeneAnalysis` is a scikit-learn-style estimator: set the question (trait,
condition, covariates, mode) at construction, `fit` it on a table of samples,
read the answer (`result_`, a `RegressionResult`) and the statistics table of
every gene (`to_frame()`). The folder-based calls (`answer_problem`,
`run_problems`) are unchanged; this is the same analysis without the layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator

from ..core import (
    Mode,
    ProblemId,
    SelectBy,
    TaskInfo,
    check_mode,
    cohort_label,
    is_anndata,
)
from ._analysis_data import AnalysisData, Question, analysis_data, tested_contrasts
from ._analysis_views import AnalysisViews
from ._blas import one_blas_thread
from ._data import ProblemData
from ._design import CheckedDesign, checked_design, checked_names, warn_small_groups, within_groups
from ._formula import FormulaDesign, formula_design
from ._gene_table import gene_tables
from ._pipeline import analyse
from ._table_columns import (
    FEW_RESIDUAL_DF,
    MIN_RESIDUAL_DF,
    DroppedSamplesWarning,
    SmallSampleWarning,
    group_labels,
    linked_frame,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DroppedSamplesWarning", "GeneAnalysis", "SmallSampleWarning", "linked_frame"]


class GeneAnalysis(AnalysisViews, BaseEstimator):
    """The genes associated with a trait in one table, optionally given a condition and covariates.

    Parameters
    ----------
    trait
        The trait's column.
    condition
        A column conditioned on (Age, Gender, or another trait's values), or None.
    covariates
        More numeric columns adjusted for (standard mode only): they join the
        condition as unpenalized covariates of the Lasso and of the marginal tests.
        A string is one column; a column holding text is refused, naming it.
    mode, select_by
        As `answer_problem`: "standard" (the default here: converged, α chosen
        by cross-validated prediction) or "reference" (the published pipeline,
        whose α uses `known_genes`).
    known_genes
        The trait's known genes (task_info's `related_genes`): the CV's selection
        scores, and α in reference mode or with `select_by="precision"`.
    resamples, seed
        The seeded random halves of the selection frequency (standard mode).
    groups
        A column naming each sample's group, for paired or repeated designs (a
        patient id): every group's means are taken out of the trait, the genes and
        the covariates, which is the model with one unpenalized indicator a group
        (Frisch-Waugh-Lovell; standard mode). The marginal tests lose a degree of
        freedom a group; the cross-validation predicts within-group differences.
    moderated
        Add limma's moderated t, p and FDR (InMoose; the `limma` extra) beside the
        ordinary ones (not with `groups`).
    genes
        The gene columns of a DataFrame (default: every numeric column but the trait,
        condition, covariates, groups, Age and Gender, and but those that cannot be genes,
        each named in a warning: row numbers, whole numbers among decimal genes, a name
        not in `symbols`; booleans and text are annotations), or a subset of an AnnData's
        `var_names` (whose genes are always its `var_names`, never an `obs` column).
    case
        The trait's case level, when the trait column holds text (a two-level
        categorical): that level is coded 1, the other 0. A numeric trait must
        be coded 0/1 already (GenoTEX traits are binary), unless `continuous`.
    design
        The design as a formula, ``"~ Trait + Age + C(stage)"`` (the `formula` extra): the
        trait is one of its plain terms, and may enter interactions as itself
        (``Trait:Age``); the others are coded as covariates (text and ``C()`` terms by
        treatment contrasts, a paired design's ``C(patient)``), for OLS and limma alike.
        A formula is code: its ``C()``, ``np.log()`` and ``{...}`` terms run as Python.
        Not with `condition`, `covariates` or `groups`: write them in it.
    contrast
        For a trait of more than two levels (a stage, a subtype): (the case level, the
        control level), or a list of such pairs tested at once (``[("III", "I"), ("II",
        "I")]``). The first pair's control is the reference level; the first pair's case
        is coded 1 for the model, and every further level gets an unpenalized indicator
        covariate, so each pair's difference is estimated on all samples (limma's and
        R's contrasts).
    coef
        The design's coefficients to test gene by gene, by the names of its columns
        (`design_columns_`: ``"Trait:Age"``, ``"Age"``, ``"C(stage)[T.II]"``), one or a
        list; by default the trait's. `to_frame()` shows the first (or a contrast's);
        `to_frame(coef=...)` any other. The model (the Lasso) is the trait's whatever it is.
    continuous
        The trait is a number (a score, an age), not two groups: the tests give each gene's
        slope on it, and the model's cross-validation reports a regression's normalized
        mean squared error and R² in place of an accuracy.
    symbols
        The gene symbols (and synonyms) a DataFrame's gene columns may have, such as a
        synonym table's keys and values: a numeric column named otherwise is left out,
        named in a warning.
    strict
        Refuse a design that is not of full rank at R's tolerance instead of leaving out
        the covariates that make it so (a constant one, one the others make or nearly
        make) with a `DesignWarning` naming them. A covariate collinear with the trait is
        refused either way.

    Attributes
    ----------
    result_ : RegressionResult
        The ranked genes, α and how they were reached.
    statistics_ : pandas.DataFrame
        Every gene's row for the first coefficient tested (`to_frame`).
    coefficients_ : tuple of str
        The coefficients and contrasts tested, in order (`to_frame(coef=...)`).
    design_columns_ : list of str
        The per-gene design's columns, the intercept first: what `coef` may name.
    condition_number_ : float
        The design's condition number, its columns scaled to unit norm (`summary()`).
    samples_dropped_ : int
        Samples left out because their trait, condition or a covariate is missing, or a
        formula's transform made no value (each fit says so in a `DroppedSamplesWarning`).
    samples_dropped_by_ : dict
        Those samples by why: "trait", or the first covariate they lack.
    residual_df_ : int
        Residual degrees of freedom of the marginal tests; a fit with fewer than 3 is
        refused, one with fewer than 10 warned of (`SmallSampleWarning`).
    few_samples_ : bool
        Whether the fit had fewer than 10 residual degrees of freedom, or a trait group
        of fewer than 3 samples (each said in a `SmallSampleWarning`).
    covariates_dropped_ : dict
        The covariates (the condition among them) left out of the design, with why:
        constant in the samples fitted, or a combination (or nearly) of the others.
    """

    def __init__(  # noqa: PLR0913 - scikit-learn's style: every option a parameter
        self,
        trait: str,
        condition: str | None = None,
        covariates: Sequence[str] = (),
        *,
        mode: Mode = "standard",
        select_by: SelectBy = "prediction",
        known_genes: Sequence[str] = (),
        resamples: int = 50,
        seed: int = 0,
        groups: str | None = None,
        moderated: bool = False,
        genes: Sequence[str] | None = None,
        case: str | None = None,
        strict: bool = False,
        design: str | None = None,
        contrast: Any = None,
        coef: str | Sequence[str] | None = None,
        continuous: bool = False,
        symbols: Collection[str] | None = None,
    ) -> None:
        self.trait = trait
        self.condition = condition
        self.covariates = covariates
        self.mode = mode
        self.select_by = select_by
        self.known_genes = known_genes
        self.resamples = resamples
        self.seed = seed
        self.groups = groups
        self.moderated = moderated
        self.genes = genes
        self.case = case
        self.strict = strict
        self.design = design
        self.contrast = contrast
        self.coef = coef
        self.continuous = continuous
        self.symbols = symbols

    def _question(self) -> Question:
        """What is asked, checked: the names given once, a formula read, options that agree."""
        given = [*([self.condition] if self.condition else []), *self._covariates()]
        covariates = checked_names(self.trait, given)
        if self.continuous and (self.case is not None or self.contrast is not None):
            raise ValueError("a continuous trait has no case level or contrast")
        formula = self._formula(covariates)
        if formula is not None and formula.trait_terms and self.contrast is not None:
            raise ValueError("an interaction with a trait of several levels is not tested "
                             "here; give each level's contrast with contrast=")  # fmt: skip
        return Question(
            self.trait, covariates, self.groups, None if self.genes is None else
            [str(g) for g in self.genes], self.case, formula, self.contrast, self.continuous,
            None if self.symbols is None else set(map(str, self.symbols)),
        )  # fmt: skip

    def _formula(self, covariates: list[str]) -> FormulaDesign | None:
        """The design formula read (None without one); refused beside what it replaces."""
        if self.design is None:
            return None
        if covariates or self.groups is not None:
            raise ValueError("give the condition, covariates and groups in the design formula "
                             "(+ Age, + C(patient)), not beside it")  # fmt: skip
        return formula_design(self.design, self.trait)

    def _covariates(self) -> list[str]:
        """The covariates as a list: a string is one column (`covariates="Age"`)."""
        if isinstance(self.covariates, str):
            return [self.covariates]
        return [str(c) for c in self.covariates]

    def _check_degrees_of_freedom(self, samples: int, covariates: int) -> None:
        """Refuse a fit the marginal tests cannot make, in one sentence; flag a fragile one."""
        residual = samples - 2 - covariates - self._absorbed  # intercept, trait, covariates
        self.residual_df_ = residual
        self.few_samples_ = residual < FEW_RESIDUAL_DF
        if residual < MIN_RESIDUAL_DF:
            raise ValueError(
                f"{samples} samples with {covariates} covariates leave {max(residual, 0)} "
                f"residual degrees of freedom; the tests need at least {MIN_RESIDUAL_DF} "
                "(more samples, or fewer covariates)"
            )
        if self.few_samples_:
            warnings.warn(
                f"{samples} samples with {covariates} covariates leave {residual} residual "
                f"degrees of freedom (under {FEW_RESIDUAL_DF}): the p-values and FDR are "
                "fragile; the result is flagged (few_samples_)",
                SmallSampleWarning,
                stacklevel=3,
            )

    def fit(self, data: Any, y: None = None) -> GeneAnalysis:
        """Answer the question on `data`: a linked DataFrame (samples x features) or an AnnData
        (genes in `var_names`, the trait and covariates in `obs`; see `genes`). The trait is
        `data`'s column `trait`: a `y` is refused, not ignored.
        """
        if y is not None:
            raise ValueError(f"fit takes the trait from the data's column {self.trait!r}; "
                             "give no y (add it to the data as that column)")  # fmt: skip
        mode = check_mode(self.mode)
        if mode == "reference" and (self._covariates() or self.groups or self.design):
            raise ValueError("covariates beside the condition, groups or a design formula need "
                             "mode='standard'")  # fmt: skip
        read = analysis_data(data, self._question())
        self.samples_dropped_by_ = read.dropped_by
        self.samples_dropped_ = int(np.sum(~read.keep))
        #: a DataFrame's columns left out of the genes for holding text
        self.text_columns_ = read.text_columns
        x, target, z, w = self._within(read)
        self.samples_fitted_ = len(target)
        self._describe_source(data, x)
        self._check_trait(target)
        checked = self._checked(target, z, read, w)
        problem = ProblemId(self.trait, self.condition)
        task_info = TaskInfo({self.trait: tuple(self.known_genes)}, {self.trait: ()})
        arrays = ProblemData(problem, self._cohorts, np.asfortranarray(x), target, checked.z,
                             tuple(read.genes))  # fmt: skip
        with one_blas_thread(reference=mode == "reference"):
            self.result_ = analyse(arrays, task_info, mode=mode, select_by=self.select_by)
        if self.result_.alpha_fallback:
            warnings.warn(
                f"no alpha selected a known gene of {self.trait!r} in the cross-validation "
                f"(known_genes: {len(self.known_genes)}): alpha is the published fallback "
                f"{self.result_.alpha:g}, and {len(self.result_.genes)} genes were selected",
                UserWarning,
                stacklevel=2,
            )
        self._tables = self._gene_tables(x, target, checked, read)
        self.coefficients_ = tuple(self._tables)
        self.statistics_ = self._tables[self.coefficients_[0]]
        return self

    def _within(
        self, read: AnalysisData
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """x, y, z and w, with each group's means taken out under `groups` (`within_groups`)."""
        self._absorbed = 0
        if self.groups is None:
            return read.x, read.y, read.z, read.w
        labels = group_labels(read.annotations, self.groups)[read.keep]
        k = 0 if read.z is None else read.z.shape[1]
        both = [b for b in (read.z, read.w) if b is not None]
        zw = np.column_stack(both) if both else None
        x, target, zw, self._absorbed = within_groups(labels, read.x, read.y, zw)
        z = None if read.z is None or zw is None else zw[:, :k]
        w = None if read.w is None or zw is None else zw[:, k:]
        return x, target, z, w

    def _describe_source(self, data: Any, x: np.ndarray) -> None:
        source = getattr(data, "uns", {}).get("genotex", {}) if is_anndata(data) else {}
        self._cohorts = (str(source.get("cohort") or "in-memory"),)
        #: how the figures name the cohort (its series, its Xena folder; a subset says so)
        self.cohort_label_ = cohort_label(source, int(data.shape[0]))
        #: whether the genes look log2-scaled (within ±30, as log2 values are, centred or not,
        #: where intensities and counts reach the hundreds): the effect is a log2 fold change
        self.log2_ = bool(x.size and np.nanmin(x) >= -30 and np.nanmax(x) <= 30)

    def _check_trait(self, target: np.ndarray) -> None:
        if len(target) == 0:
            raise ValueError(
                f"no sample is left: every one lacks the trait {self.trait!r} or a covariate "
                f"({', '.join(f'{k}: {n}' for k, n in self.samples_dropped_by_.items())})"
            )
        if len(np.unique(target)) < 2:
            dropped = (
                f" after {self.samples_dropped_} samples were left out for missing values"
                if self.samples_dropped_
                else ""
            )
            raise ValueError(f"the trait {self.trait!r} is constant{dropped}")

    def _checked(
        self, target: np.ndarray, z: np.ndarray | None, read: AnalysisData, w: np.ndarray | None
    ) -> CheckedDesign:
        """The design checked at R's tolerance (`checked_design`), the degrees of freedom and
        the trait's groups then judged.
        """
        self.covariates_dropped_: dict[str, str] = {}
        columns = len(read.z_names) + len(read.w_names)
        checked = CheckedDesign(z, list(read.z_names), w, list(read.w_names), {}, float("nan"))
        if len(target) - 2 - columns - self._absorbed >= MIN_RESIDUAL_DF:  # else refused below
            checked = checked_design(target, z, read.z_names, trait=self.trait,
                                     strict=self.strict, w=w, w_names=read.w_names)  # fmt: skip
            self.covariates_dropped_ = dict(checked.left)
        self.condition_number_ = checked.condition_number
        self._check_degrees_of_freedom(len(target), len(checked.z_names) + len(checked.w_names))
        tested = self.trait if read.levels is None else f"{self.trait}[{read.levels.pairs[0][0]}]"
        self.design_columns_ = ["Intercept", tested, *checked.z_names, *checked.w_names]
        if not self.continuous:
            self.few_samples_ = warn_small_groups(self._counts(read), self.trait) or (
                self.few_samples_
            )
        return checked

    def _counts(self, read: AnalysisData) -> dict[str, int]:
        """The samples fitted of each group compared: control and case, or a contrast's levels."""
        if read.levels is None:
            coded = read.y
            return {"control": int(np.sum(coded == 0)), "case": int(np.sum(coded == 1))}
        values = read.annotations[self.trait].astype(str).to_numpy()[read.keep]
        asked = dict.fromkeys(level for pair in read.levels.pairs for level in pair)
        return {f"{level!r}": int(np.sum(values == level)) for level in asked}

    def _gene_tables(
        self, x: np.ndarray, target: np.ndarray, checked: CheckedDesign, read: AnalysisData
    ) -> dict[str, pd.DataFrame]:
        contrasts = tested_contrasts(self.design_columns_, self.trait, read.levels, self.coef)
        alpha = self.result_.alpha if self.mode == "standard" else None  # the standard α only
        return gene_tables(
            x, target, read.genes, checked.z, self.result_.genes, w=checked.w,
            contrasts=contrasts, names=self.design_columns_, frequency_alpha=alpha,
            lmm=self.result_.batch_effect, resamples=self.resamples, seed=self.seed,
            absorbed=self._absorbed, moderated=self.moderated,
        )  # fmt: skip
