"""Planted faults: a copy of a reference tree with known errors at known places.

`make_faulty_prediction` is how genotex's diagnosis is proven (its tests plant
each error class, alone and combined, and require it to be found at the right
file with the right class), and how users calibrate their own analyses of a
submission: plant, diagnose, count what was found.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import (
    Mode,
    ResultFile,
    TaskInfo,
    gate_write,
    regress_file_name,
    write_table,
    write_text_atomic,
)

__all__ = ["FAULTS", "PlantedFault", "make_faulty_prediction"]

#: Faults of one cohort's files (the error class `genotex diagnose` should name).
_COHORT_FAULTS = (
    "trait_inverted", "trait_constant", "trait_row_wrong", "age_unit", "gender_inverted",
    "feature_all_missing", "feature_constant", "samples_misaligned", "samples_dropped",
    "gene_ids_not_symbols", "symbols_not_normalized", "values_transformed", "cohort_usability",
)  # fmt: skip
#: Every fault that can be planted: the cohort faults, and "analysis" (one problem's answer).
FAULTS: tuple[str, ...] = (*_COHORT_FAULTS, "analysis")


@dataclass(frozen=True)
class PlantedFault:
    """One fault: its error class, and where (`cohort` for cohort faults, `problem` key for
    "analysis").
    """

    error_class: str
    trait: str
    cohort: str | None = None
    problem: str | None = None

    def __post_init__(self) -> None:
        if self.error_class not in FAULTS:
            raise ValueError(f"unknown fault {self.error_class!r}; choose from {list(FAULTS)}")
        if (self.error_class == "analysis") != (self.problem is not None):
            raise ValueError("an 'analysis' fault names a problem; a cohort fault names a cohort")


class _Cohort:
    """A cohort's three tables in a copy of the tree, edited in memory and written back."""

    def __init__(self, base: Path, cohort: str) -> None:
        self.paths = {
            "clinical": base / "clinical_data" / f"{cohort}.csv",
            "gene": base / "gene_data" / f"{cohort}.csv",
            "linked": base / f"{cohort}.csv",
        }
        self.tables = {
            kind: pd.read_csv(path, index_col=0)
            for kind, path in self.paths.items()
            if path.is_file()
        }

    def clinical_row(self, feature: str, values: pd.Series) -> None:
        """Set a clinical feature in clinical_data (a row) and the linked table (a column)."""
        if "clinical" in self.tables and feature in self.tables["clinical"].index:
            self.tables["clinical"].loc[feature] = values.reindex(self.tables["clinical"].columns)
        if "linked" in self.tables and feature in self.tables["linked"].columns:
            self.tables["linked"][feature] = values.reindex(self.tables["linked"].index)

    def feature(self, name: str) -> pd.Series:
        if "clinical" in self.tables:
            return pd.Series(self.tables["clinical"].loc[name], dtype=float)
        return pd.Series(self.tables["linked"][name], dtype=float)

    def write(self) -> None:
        for kind, table in self.tables.items():
            write_table(self.paths[kind], table)


def _genes(cohort: _Cohort, trait: str) -> list[str]:
    if "gene" in cohort.tables:
        return [str(g) for g in cohort.tables["gene"].index]
    return [c for c in cohort.tables["linked"].columns if c not in (trait, "Age", "Gender")]


def _rename_genes(cohort: _Cohort, trait: str, rename: dict[str, str]) -> None:
    if "gene" in cohort.tables:
        cohort.tables["gene"] = cohort.tables["gene"].rename(index=rename)
    if "linked" in cohort.tables:
        cohort.tables["linked"] = cohort.tables["linked"].rename(columns=rename)


def _plant_cohort(cohort: _Cohort, fault: str, trait: str, rng: np.random.Generator) -> None:
    if fault == "trait_inverted":
        cohort.clinical_row(trait, 1 - cohort.feature(trait))
    elif fault == "trait_constant":
        cohort.clinical_row(trait, cohort.feature(trait) * 0 + 1)
    elif fault == "trait_row_wrong":
        cohort.clinical_row(trait, cohort.feature("Gender"))
    elif fault == "age_unit":
        cohort.clinical_row("Age", cohort.feature("Age") * 12)
    elif fault == "gender_inverted":
        cohort.clinical_row("Gender", 1 - cohort.feature("Gender"))
    elif fault == "feature_all_missing":  # Age read from no row: every value missing
        cohort.clinical_row("Age", cohort.feature("Age") * np.nan)
    elif fault == "feature_constant":  # Age read from a row that is the same for all
        cohort.clinical_row("Age", cohort.feature("Age") * 0 + 50)
    elif fault == "samples_misaligned":
        linked = cohort.tables["linked"]
        clinical = [c for c in (trait, "Age", "Gender") if c in linked.columns]
        shift = np.roll(np.arange(len(linked)), len(linked) // 2)
        linked[clinical] = linked[clinical].to_numpy()[shift]
    elif fault == "samples_dropped":
        samples = cohort.feature(trait).index
        keep = set(samples[: int(0.75 * len(samples))])
        for kind, table in cohort.tables.items():
            if kind == "linked":
                cohort.tables[kind] = table.loc[[s for s in table.index if s in keep]]
            else:
                cohort.tables[kind] = table[[s for s in table.columns if s in keep]]
    elif fault == "gene_ids_not_symbols":
        genes = _genes(cohort, trait)
        _rename_genes(cohort, trait, {g: f"{200000 + i}_at" for i, g in enumerate(genes)})
    elif fault == "symbols_not_normalized":
        genes = _genes(cohort, trait)
        chosen = rng.choice(len(genes), size=max(3, len(genes) // 5), replace=False)
        _rename_genes(cohort, trait, {genes[i]: genes[i].lower() for i in chosen})
    elif fault == "values_transformed":
        genes = _genes(cohort, trait)
        if "gene" in cohort.tables:
            cohort.tables["gene"] = 2.0 ** cohort.tables["gene"]
        if "linked" in cohort.tables:
            cohort.tables["linked"][genes] = 2.0 ** cohort.tables["linked"][genes]


def _flip_usability(info_path: Path, cohort: str) -> None:
    info = json.loads(info_path.read_text(encoding="utf-8"))
    record = info[cohort]
    if record.get("is_usable"):
        record.update(is_biased=True, is_usable=False)
    else:
        record.update(is_gene_available=True, is_trait_available=True, is_available=True,
                      is_biased=False, is_usable=True)  # fmt: skip
        record["sample_size"] = record.get("sample_size") or 10**6
    write_text_atomic(info_path, json.dumps(info, indent=1) + "\n")


def _wrong_answer(path: Path, decoys: list[str]) -> None:
    """The problem's answer replaced by genes of the cohort that are not the reference's."""
    result = ResultFile.read(path)
    genes = [g for g in decoys if g not in set(result.genes)][: max(len(result.genes), 5)]
    ResultFile(tuple(genes)).write(path)


def make_faulty_prediction(
    reference: str | Path,
    out: str | Path,
    faults: Iterable[PlantedFault],
    *,
    seed: int = 0,
    reanalyse: tuple[TaskInfo, Mode] | None = None,
) -> Path:
    """Copy a reference `output/` tree to `out` and plant `faults` in the copy.

    Cohort faults edit the cohort's clinical, gene and linked tables consistently
    (a trait inverted in clinical_data is inverted in the linked table too);
    "cohort_usability" flips the cohort's `is_usable`; "analysis" replaces one
    problem's genes with others of its data. Everything else is the reference's
    byte for byte, so a diagnosis of the copy should name exactly the faults.

    The answers stay the reference's unless `reanalyse` = (task_info, mode): then
    every problem of a trait whose cohorts were touched is answered again by the
    pipeline in that mode on the faulty data (as an agent would have answered it).

    Returns `out`.
    """
    source, out = Path(reference), Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; give a new folder")
    shutil.copytree(source, gate_write(out), symlinks=False)
    rng = np.random.default_rng(seed)
    faults = list(faults)
    for fault in faults:
        base = out / "preprocess" / fault.trait
        if fault.error_class == "analysis":
            trait, _, condition = str(fault.problem).partition("|")
            path = (
                out
                / "regress"
                / trait
                / regress_file_name(None if condition in ("", "None") else condition)
            )
            linked = sorted(base.glob("*.csv"))
            decoys = list(pd.read_csv(linked[0], index_col=0, nrows=0).columns) if linked else []
            _wrong_answer(path, [d for d in decoys if d not in (trait, "Age", "Gender")])
        elif fault.error_class == "cohort_usability":
            _flip_usability(base / "cohort_info.json", str(fault.cohort))
        else:
            cohort = _Cohort(base, str(fault.cohort))
            _plant_cohort(cohort, fault.error_class, fault.trait, rng)
            cohort.write()
    if reanalyse is not None:
        _reanalyse(out, {f.trait for f in faults if f.error_class != "analysis"}, *reanalyse)
    return out


def _reanalyse(out: Path, traits: set[str], task_info: TaskInfo, mode: Mode) -> None:
    from ..regression import ProblemFailed, ProblemSkipped, answer_problem, write_result

    for problem in task_info.problems():
        if problem.trait not in traits and problem.condition not in traits:
            continue
        try:
            result = answer_problem(out / "preprocess", problem, task_info, mode=mode)
        except (ProblemSkipped, ProblemFailed):
            result_path = out / "regress" / problem.trait / regress_file_name(problem.condition)
            result_path.unlink(missing_ok=True)  # no answer, as an agent would have none
            continue
        write_result(out / "regress", result)
