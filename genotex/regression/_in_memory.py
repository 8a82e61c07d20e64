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
    anndata_to_linked,
    check_mode,
    is_anndata,
)
from ._blas import one_blas_thread
from ._data import ProblemData
from ._gene_table import gene_table
from ._pipeline import RegressionResult, analyse

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["DroppedSamplesWarning", "GeneAnalysis", "SmallSampleWarning", "linked_frame"]

#: Columns of a linked table that are never genes.
_CLINICAL = ("Age", "Gender")


def linked_frame(data: Any) -> pd.DataFrame:
    """A linked table (samples x features) from a DataFrame or an AnnData (obs beside X).

    An AnnData's numeric `obs` columns (trait, Age, Gender, covariates) come first,
    then its genes (`var_names`); a DataFrame is taken as it is.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if is_anndata(data):
        return anndata_to_linked(data)
    raise TypeError(
        f"a linked table is a pandas DataFrame (samples x features) or an AnnData, "
        f"not {type(data).__name__}"
    )


def _numeric(frame: pd.DataFrame, columns: Sequence[str], what: str) -> np.ndarray:
    """The columns as numbers (NaN where missing); a column holding text, or holding no value
    at all, is refused in one sentence naming it (it would drop every sample unsaid).
    """
    import pandas as pd

    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the table has no {what} column {missing[0]!r}")
    block = frame.loc[:, list(columns)].apply(pd.to_numeric, errors="coerce")
    for name in columns:
        given, numbers = frame[name], block[name]
        text = given.notna() & numbers.isna()
        if pd.api.types.is_bool_dtype(given):
            continue
        if bool(text.any()):
            shown = ", ".join(repr(str(v)) for v in pd.unique(given[text])[:3])
            raise ValueError(
                f"the {what} column {name!r} holds text ({shown}): code it as numbers first "
                "(e.g. Gender as 0 female, 1 male)"
            )
        if not bool(numbers.notna().any()):
            raise ValueError(f"the {what} column {name!r} holds no value: every sample lacks it")
    return block.to_numpy(dtype=np.float64)


#: The residual degrees of freedom below which a fit is refused, and below which it is
#: flagged: the marginal t tests divide by them, and with one or two the p-values and FDR
#: say nothing (5 samples with Age and Gender leave 1).
MIN_RESIDUAL_DF = 3
FEW_RESIDUAL_DF = 10


class SmallSampleWarning(UserWarning):
    """A fit with few residual degrees of freedom: its p-values and FDR are fragile."""


class DroppedSamplesWarning(UserWarning):
    """Samples were left out of a fit for a missing trait or covariate."""


def _unique_columns(frame: pd.DataFrame, what: str) -> None:
    """Refuse a table with two columns of one name (which one is meant cannot be told)."""
    duplicated = frame.columns[frame.columns.duplicated()]
    if len(duplicated):
        name = duplicated[0]
        count = int((frame.columns == name).sum())
        raise ValueError(f"{what} has {count} columns named {name!r}: rename or drop all but one")


def _annotations_and_genes(
    data: Any, not_genes: set[str], genes: Sequence[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sample annotations (trait, condition, covariates, groups) and the gene columns.

    An AnnData's genes are its `var_names` (never an `obs` column, such as scanpy's QC
    metrics), its annotations its `obs`. A DataFrame's genes are `genes` when given, else
    every numeric column but `not_genes` (booleans and text are annotations).
    """
    import pandas as pd

    if is_anndata(data):
        names = pd.Index(data.var_names)
        if names.has_duplicates:
            twice = names[names.duplicated()][0]
            raise ValueError(
                f"the AnnData's var_names hold duplicates ({twice!r} is there "
                f"{int((names == twice).sum())} times): make them unique first "
                "(adata.var_names_make_unique())"
            )
        block = data.to_df().astype(np.float64)
        annotations = data.obs
        _unique_columns(annotations, "the AnnData's obs")
        if genes is not None:
            missing = [g for g in genes if g not in block.columns]
            if missing:
                raise ValueError(f"the AnnData has no gene {missing[0]!r} in its var_names")
            block = block.loc[:, list(genes)]
        return annotations, block
    data = linked_frame(data)  # a DataFrame as it is; anything else refused in one sentence
    _unique_columns(data, "the table")
    if genes is None:
        genes = [str(c) for c in data.columns if c not in not_genes and _gene_like(data[c])]
    missing = [g for g in genes if g not in data.columns]
    if missing:
        raise ValueError(f"the table has no gene column {missing[0]!r}")
    block = data.loc[:, list(genes)].apply(pd.to_numeric, errors="coerce").astype(np.float64)
    return data, block


def _text_columns(data: Any, not_genes: set[str], asked: Sequence[str] | None) -> list[str]:
    """A DataFrame's columns left out of the genes for holding text (annotations such as a
    tissue); one that also holds some numbers, most likely a damaged gene column, is said in
    a warning naming it (0.8.0 dropped it unsaid).
    """
    import pandas as pd

    if asked is not None or not isinstance(data, pd.DataFrame):
        return []
    left = [
        c for c in data.columns
        if c not in not_genes and not pd.api.types.is_bool_dtype(data[c])
        and not _gene_like(data[c])
    ]  # fmt: skip
    partly = [str(c) for c in left if pd.to_numeric(data[c], errors="coerce").notna().any()]
    if partly:
        warnings.warn(
            f"{len(partly)} columns hold text among numbers and are left out of the genes: "
            f"{', '.join(repr(c) for c in partly[:5])}{', ...' if len(partly) > 5 else ''} "
            "(convert them with pd.to_numeric to keep them)",
            UserWarning,
            stacklevel=4,
        )
    return [str(c) for c in left]


def _gene_like(column: pd.Series) -> bool:
    """A column that holds gene values: numeric (not boolean), or text most of which are
    numbers (a damaged gene column, refused later with its count, never passed over).
    """
    import pandas as pd

    if pd.api.types.is_bool_dtype(column):
        return False
    if pd.api.types.is_numeric_dtype(column):
        return True
    return bool(pd.to_numeric(column, errors="coerce").notna().mean() > 0.5)


def _binary_trait(annotations: pd.DataFrame, name: str, case: str | None) -> np.ndarray:
    """The trait's values coded 1 (the case) and 0, NaN where missing; anything else refused
    in one sentence (GenoTEX traits are binary).
    """
    import pandas as pd

    if name not in annotations.columns:
        if name in annotations.index:
            raise ValueError(
                f"the table has no trait column {name!r} but a row of that name: is it genes "
                "x samples? Transpose it (samples as rows)"
            )
        raise ValueError(f"the table has no trait column {name!r}")
    column = annotations[name]
    if pd.api.types.is_bool_dtype(column):
        return column.astype(np.float64).to_numpy()
    numbers = pd.to_numeric(column, errors="coerce")
    text = not pd.api.types.is_numeric_dtype(column) and bool(
        (numbers.isna() & column.notna()).any()
    )
    if text:
        levels = sorted(str(v) for v in pd.unique(column.dropna()))
        shown = ", ".join(repr(v) for v in levels[:5])
        if len(levels) != 2:
            raise ValueError(
                f"the trait column {name!r} holds {len(levels)} text levels ({shown}); a GenoTEX "
                "trait is binary: code it 0/1"
            )
        if case is None or case not in levels:
            asked = "" if case is None else f"case={case!r} is not one of them; "
            raise ValueError(
                f"the trait column {name!r} holds text ({shown}): {asked}name the case level, "
                f"e.g. GeneAnalysis({name!r}, case={levels[-1]!r})"
            )
        coded = (column.astype(str) == case).astype(np.float64)
        return coded.where(column.notna()).to_numpy(dtype=np.float64)
    values = numbers.to_numpy(dtype=np.float64)
    found = np.unique(values[np.isfinite(values)])
    if not set(found.tolist()) <= {0.0, 1.0}:
        shown = ", ".join(f"{v:g}" for v in found[:6])
        raise ValueError(
            f"the trait column {name!r} holds {len(found)} values ({shown}); a GenoTEX trait is "
            "binary: code it 0 (control) and 1 (case)"
        )
    return values


def _group_labels(annotations: pd.DataFrame, column: str) -> np.ndarray:
    """Each sample's group, as text; a sample with no group is refused in one sentence."""
    import pandas as pd

    if column not in annotations.columns:
        raise ValueError(f"the table has no groups column {column!r}")
    values = annotations[column]
    missing = int(pd.isna(values).sum())
    if missing:
        raise ValueError(
            f"the groups column {column!r} has {missing} samples without a group: give each "
            "sample its group, or leave those samples out"
        )
    return values.astype(str).to_numpy()


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
        Whether the fit had fewer than 10 residual degrees of freedom.
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

    def _arrays(
        self, data: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list[str], pd.DataFrame]:
        """X (genes), y (the trait, 0/1), z (condition and covariates), the gene names and the
        annotations, for the samples whose trait and covariates are known.
        """
        covariates = [*([self.condition] if self.condition else []), *self._covariates()]
        if self.trait in covariates:
            raise ValueError(f"{self.trait!r} is the trait: it cannot also be a covariate")
        not_genes = {self.trait, *covariates, *_CLINICAL, *([self.groups] if self.groups else [])}
        asked = None if self.genes is None else [str(g) for g in self.genes]
        annotations, block = _annotations_and_genes(data, not_genes, asked)
        #: a DataFrame's columns left out of the genes for holding text
        self.text_columns_ = _text_columns(data, not_genes, asked)
        y = _binary_trait(annotations, self.trait, self.case)
        z = _numeric(annotations, covariates, "covariate") if covariates else None
        missing = {"trait": ~np.isfinite(y)}
        for index, name in enumerate(covariates):
            assert z is not None
            missing[name] = ~np.isfinite(z[:, index])
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

    def _within(
        self, groups: np.ndarray, x: np.ndarray, target: np.ndarray, z: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
        """x, y and z with each group's means taken out, and the degrees of freedom that cost."""
        import pandas as pd

        codes, labels = pd.factorize(groups[self._kept])

        def within(values: np.ndarray) -> np.ndarray:
            sums = np.zeros((len(labels), values.shape[1]))
            np.add.at(sums, codes, values)
            counts = np.bincount(codes, minlength=len(labels))[:, None]
            return values - (sums / counts)[codes]

        xw = within(x)
        yw = within(target.reshape(-1, 1))[:, 0]
        zw = None if z is None else within(z.reshape(len(target), -1))
        return xw, yw, zw, len(labels) - 1

    def fit(self, data: Any, y: None = None) -> GeneAnalysis:
        """Answer the question on `data`: a linked DataFrame (samples x features) or an AnnData
        (genes in `var_names`, the trait and covariates in `obs`; see `genes`).
        """
        mode = check_mode(self.mode)
        if mode == "reference" and (len(self._covariates()) or self.groups is not None):
            raise ValueError("covariates beside the condition, or groups, need mode='standard'")
        x, target, z, genes, annotations = self._arrays(data)
        groups = None if self.groups is None else _group_labels(annotations, self.groups)
        self._absorbed = 0
        if groups is not None:
            x, target, z, self._absorbed = self._within(groups, x, target, z)
        source = getattr(data, "uns", {}).get("genotex", {}) if is_anndata(data) else {}
        cohorts = (str(source.get("cohort") or "in-memory"),)
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
        self._check_degrees_of_freedom(
            len(target), 0 if z is None else z.reshape(len(target), -1).shape[1]
        )
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
            given = {"adjusted_for": adjusted, "title": self._title("genes by marginal test")}
            return volcano_plot(self.to_frame(), **{**given, **options})
        if kind == "frequency":
            given = {"title": self._title("selection frequency")}
            return frequency_plot(self.to_frame(), **{**given, **options})
        raise ValueError(f"unknown plot {kind!r}; choose volcano or frequency")

    def _title(self, what: str) -> str:
        """A figure's title: the trait, the condition (or none), the cohort, and what it shows."""
        condition = f" given {self.condition}" if self.condition else ""
        cohorts = " + ".join(self.result_.cohorts) if hasattr(self, "result_") else "in-memory"
        return f"{self.trait}{condition} · {cohorts}: {what}"

    def to_frame(self) -> pd.DataFrame:
        """Every gene: the model's `coefficient`, `selected`, `rank`, `frequency`, and the
        marginal `effect`, `se`, `t`, `p_value`, `fdr` (see `marginal_statistics`).
        """
        if not hasattr(self, "statistics_"):
            raise ValueError("fit the analysis first")
        return self.statistics_.copy()
