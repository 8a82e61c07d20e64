"""Answers on in-memory data: a problem from a linked table or an AnnData, no folders needed.

`GeneAnalysis` is a scikit-learn-style estimator: set the question (trait,
condition, covariates, mode) at construction, `fit` it on a table of samples,
read the answer (`result_`, a `RegressionResult`) and the statistics table of
every gene (`to_frame()`). The folder-based calls (`answer_problem`,
`run_problems`) are unchanged; this is the same analysis without the layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
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
from ._blas import one_blas_thread
from ._data import ProblemData
from ._design import (
    checked_covariates,
    checked_names,
    no_duplicated_samples,
    non_gene_columns,
    refuse_infinite,
    warn_small_groups,
    within_groups,
)
from ._formula import FormulaDesign, coded_covariates, contrast_trait, formula_design
from ._gene_table import gene_table
from ._pipeline import RegressionResult, analyse
from ._table_columns import (
    FEW_RESIDUAL_DF,
    MIN_RESIDUAL_DF,
    DroppedSamplesWarning,
    SmallSampleWarning,
    annotations_and_genes,
    binary_trait,
    group_labels,
    linked_frame,
    numeric_columns,
    text_columns,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["DroppedSamplesWarning", "GeneAnalysis", "SmallSampleWarning", "linked_frame"]

#: Columns of a linked table that are never genes.
_CLINICAL = ("Age", "Gender")


class GeneAnalysis(BaseEstimator):
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
        The gene columns of a DataFrame (default: every numeric column but the
        trait, condition, covariates, groups, Age and Gender; booleans and text
        are annotations), or a subset of an AnnData's `var_names` (whose genes are
        always its `var_names`, never an `obs` column).
    case
        The trait's case level, when the trait column holds text (a two-level
        categorical): that level is coded 1, the other 0. A numeric trait must
        be coded 0/1 already: GenoTEX traits are binary.
    design
        The design as a formula, ``"~ Trait + Age + C(stage)"`` (the `formula` extra): the
        trait is one of its plain terms; the others are coded as covariates (text and
        ``C()`` terms by treatment contrasts, a paired design's ``C(patient)``), for OLS
        and limma alike. Not with `condition`, `covariates` or `groups`: write them in it.
    contrast
        For a trait of more than two levels (a stage, a subtype): (the case level, the
        control level). The case is coded 1, and every further level gets an unpenalized
        indicator covariate, so the tested coefficient is the case - control difference
        estimated on all samples (limma's and R's contrast with the control as reference).
    strict
        Refuse a design that is not of full rank instead of leaving out the covariates
        that make it so (a constant one, one the others make) with a `DesignWarning`
        naming them. A covariate collinear with the trait is refused either way.

    Attributes
    ----------
    result_ : RegressionResult
        The ranked genes, α and how they were reached.
    statistics_ : pandas.DataFrame
        Every gene's row (`to_frame`).
    samples_dropped_ : int
        Samples left out because their trait, condition or a covariate is missing (each
        fit says so in a `DroppedSamplesWarning`).
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
        constant in the samples fitted, or a combination of the others.
    """

    def __init__(
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
        contrast: tuple[str, str] | None = None,
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

    def _arrays(
        self, data: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[str], pd.DataFrame]:
        """X (genes), y (the trait, 0/1), z (condition and covariates), the gene names and the
        annotations, for the samples whose trait and covariates are known.
        """
        given = [*([self.condition] if self.condition else []), *self._covariates()]
        covariates = checked_names(self.trait, given)
        formula = self._formula(covariates)
        read = list(formula.variables) if formula is not None else covariates
        not_genes = {self.trait, *read, *_CLINICAL, *([self.groups] if self.groups else [])}
        asked = None if self.genes is None else [str(g) for g in self.genes]
        not_genes |= non_gene_columns(data, not_genes, asked)
        annotations, block = annotations_and_genes(data, not_genes, asked)
        no_duplicated_samples(annotations.index)
        #: a DataFrame's columns left out of the genes for holding text
        self.text_columns_ = text_columns(data, not_genes, asked)
        y, levels, level_names = self._trait(annotations)
        missing = {"trait": ~np.isfinite(y)}
        z: np.ndarray | None
        if formula is not None:  # each variable the formula reads, then its coded columns
            coded, self._z_names = coded_covariates(formula, annotations)
            missing |= {v: annotations[v].isna().to_numpy() for v in formula.variables}
            z = coded if coded.shape[1] else None
        else:
            z = numeric_columns(annotations, covariates, "covariate") if covariates else None
            self._z_names = covariates
            for index, name in enumerate(covariates):
                assert z is not None
                refuse_infinite(z[:, index], name, annotations.index)
                missing[name] = np.isnan(z[:, index])
        if levels is not None and levels.shape[1]:  # the further levels come first in z
            z = levels if z is None else np.column_stack([levels, z])
            self._z_names = [*level_names, *self._z_names]
        keep = ~np.logical_or.reduce(list(missing.values()))
        #: samples left out, by why: the trait missing, else the first covariate missing
        self.samples_dropped_by_ = {}
        counted = np.zeros(len(y), dtype=bool)
        for name, lacking in missing.items():
            first = lacking & ~counted
            counted |= lacking
            if first.any():
                self.samples_dropped_by_[name] = int(first.sum())
        self.samples_dropped_ = int(np.sum(~keep))
        if self.samples_dropped_:
            said = ", ".join(f"{n} for a missing {k}" for k, n in self.samples_dropped_by_.items())
            warnings.warn(
                f"{self.samples_dropped_} of {len(y)} samples were left out ({said})",
                DroppedSamplesWarning,
                stacklevel=3,
            )
        genes = [str(c) for c in block.columns]
        x = block.to_numpy(dtype=np.float64)[keep]
        bad = ~np.isfinite(x).all(axis=0)
        if bad.any():
            named = ", ".join(repr(str(g)) for g in np.asarray(genes)[bad][:3])
            raise ValueError(
                f"{int(bad.sum())} gene columns hold missing or non-numeric values ({named}"
                f"{', ...' if bad.sum() > 3 else ''}): drop or impute them first"
            )
        self._kept = keep
        return x, y[keep], None if z is None else z[keep], genes, annotations

    def _trait(self, annotations: pd.DataFrame) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
        """The tested column (0/1), and with a contrast the further levels' indicators and
        their names (they join the covariates).
        """
        if self.contrast is not None:
            return contrast_trait(annotations, self.trait, self.contrast)
        return binary_trait(annotations, self.trait, self.case), None, []

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
        x, target, z, genes, annotations = self._arrays(data)
        coded = target  # the trait as 0/1, before any group's means are taken out
        groups = None if self.groups is None else group_labels(annotations, self.groups)
        self._absorbed = 0
        if groups is not None:
            x, target, z, self._absorbed = within_groups(groups[self._kept], x, target, z)

        source = getattr(data, "uns", {}).get("genotex", {}) if is_anndata(data) else {}
        cohorts = (str(source.get("cohort") or "in-memory"),)
        #: how the figures name the cohort (its series, its Xena folder; a subset says so)
        self.cohort_label_ = cohort_label(source, int(data.shape[0]))
        #: whether the genes look log2-scaled (within ±30, as log2 values are, centred or not,
        #: where intensities and counts reach the hundreds): the effect is a log2 fold change
        self.log2_ = bool(x.size and np.nanmin(x) >= -30 and np.nanmax(x) <= 30)
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
        names = list(self._z_names)
        self.covariates_dropped_: dict[str, str] = {}
        if len(target) - 2 - len(names) - self._absorbed >= MIN_RESIDUAL_DF:  # else refused below
            z, _, self.covariates_dropped_ = checked_covariates(
                target, z, names, trait=self.trait, strict=self.strict
            )
        self._check_degrees_of_freedom(
            len(target), 0 if z is None else z.reshape(len(target), -1).shape[1]
        )
        self.few_samples_ = warn_small_groups(coded, self.trait) or self.few_samples_
        problem = ProblemId(self.trait, self.condition)
        task_info = TaskInfo({self.trait: tuple(self.known_genes)}, {self.trait: ()})
        arrays = ProblemData(problem, cohorts, np.asfortranarray(x), target, z, tuple(genes))
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
        self.statistics_ = self._table(x, target, z, genes, self.result_)
        return self

    def _table(
        self,
        x: np.ndarray,
        target: np.ndarray,
        z: np.ndarray | None,
        genes: list[str],
        result: RegressionResult,
    ) -> pd.DataFrame:
        alpha = result.alpha if self.mode == "standard" else None  # the standard mode's α only
        return gene_table(
            x,
            target,
            genes,
            z,
            result.genes,
            frequency_alpha=alpha,
            lmm=result.batch_effect,
            resamples=self.resamples,
            seed=self.seed,
            absorbed=self._absorbed,
            moderated=self.moderated,
        )

    def plot(self, kind: str = "volcano", **options: Any) -> Figure:
        """The table's figure: "volcano" (`volcano_plot`) or "frequency" (`frequency_plot`)."""
        from ._plots import frequency_plot, volcano_plot

        if kind == "volcano":
            adjusted = [*([self.condition] if self.condition else []), *self._covariates()]
            given = {"adjusted_for": adjusted, "title": self._title("genes by marginal test"),
                     "log2": getattr(self, "log2_", False)}  # fmt: skip
            return volcano_plot(self.to_frame(), **{**given, **options})
        if kind == "frequency":
            given = {"title": self._title("selection frequency")}
            return frequency_plot(self.to_frame(), **{**given, **options})
        raise ValueError(f"unknown plot {kind!r}; choose volcano or frequency")

    def _title(self, what: str) -> str:
        """A figure's title: the trait, the condition (or none), the cohort, and what it shows."""
        condition = f" given {self.condition}" if self.condition else ""
        cohort = getattr(self, "cohort_label_", "in-memory")
        return f"{self.trait}{condition} · {cohort}: {what}"

    def to_frame(self) -> pd.DataFrame:
        """Every gene: the model's `coefficient`, `selected`, `rank`, `frequency`, and the
        marginal `effect`, `se`, `t`, `p_value`, `fdr` (see `marginal_statistics`).
        """
        if not hasattr(self, "statistics_"):
            raise ValueError("fit the analysis first")
        return self.statistics_.copy()
