"""A seeded generator of benchmark-shaped examples: a reference tree and an imperfect prediction.

`genotex demo` writes a small one; `scripts/bench_eval.py` writes benchmark-size
ones. The files have the real layout and formats (layout.md): cohort_info.json,
gene_data / clinical_data / linked CSVs, significant_genes JSONs, task_info.json.
Everything is drawn from one `numpy.random.Generator`, so a seed gives the same
bytes on every run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..core import (
    CohortRecord,
    atomic_output,
    generates_benchmark,
    regress_file_name,
    write_text_atomic,
)

__all__ = ["SynthSpec", "Example", "DEMO_SPEC", "write_example"]

_TRAITS = (
    "Asthma", "Breast_Cancer", "Crohns_Disease", "Obesity", "Type_2_Diabetes", "Psoriasis",
    "Lung_Cancer", "Alzheimers_Disease", "Rheumatoid_Arthritis", "Schizophrenia", "Hypertension",
    "Melanoma", "Osteoporosis", "Endometriosis", "Glioblastoma", "Sjögrens_Syndrome",
)  # fmt: skip
_GENE_PREFIXES = (
    "ABC", "ACT", "ADAM", "AKR", "ANK", "APO", "ATP", "BCL", "CASP", "CCL", "CD", "CDK", "COL",
    "CYP", "DLX", "EGR", "FOX", "GATA", "GST", "HLA", "HOX", "IL", "KCN", "KRT", "LRR", "MAP",
    "MMP", "MYO", "NOTCH", "PAX", "PDE", "RPL", "RPS", "SLC", "SOX", "TGF", "TNF", "WNT", "ZNF",
)  # fmt: skip


@dataclass(frozen=True)
class SynthSpec:
    """Size and imperfection of a generated example."""

    n_traits: int = 4
    n_cohorts: int = 10  # spread over the traits, round-robin
    samples: tuple[int, int] = (24, 60)  # inclusive range of samples per cohort
    n_genes: int = 400
    n_related: int = 25  # related genes per trait in task_info
    unusable_share: float = 0.2  # cohorts that are unavailable or biased
    noise: float = 0.3  # sd of the noise the prediction adds to values
    missing_share: float = 0.05  # prediction files that are left out
    malformed_results: int = 1  # prediction result JSONs written malformed


#: The example `genotex demo` evaluates (~1 MB, a second or two).
DEMO_SPEC = SynthSpec()


@dataclass(frozen=True)
class Example:
    """Where a generated example was written."""

    root: Path
    ref_output: Path
    pred_output: Path
    task_info: Path


def _gene_universe(n: int) -> list[str]:
    genes: list[str] = []
    number = 1
    while len(genes) < n:
        genes.extend(f"{prefix}{number}" for prefix in _GENE_PREFIXES)
        number += 1
    return genes[:n]


def _trait_names(n: int) -> list[str]:
    return [
        _TRAITS[i % len(_TRAITS)] + (f"_{i // len(_TRAITS) + 1}" if i >= len(_TRAITS) else "")
        for i in range(n)
    ]


def _write_csv(
    path: Path, corner: str, columns: list[str], rows: list[str], values: np.ndarray
) -> None:
    """A CSV with row labels in the first column, values with 4 decimals, NaN as empty."""
    row_format = ",".join(["%.4f"] * len(columns))
    with (
        atomic_output(path, durable=False) as tmp,
        open(tmp, "w", encoding="utf-8", newline="") as handle,
    ):
        handle.write(",".join([corner, *columns]) + "\n")
        for label, row in zip(rows, values, strict=True):
            line = row_format % tuple(row)
            if np.isnan(row).any():
                line = ",".join("" if cell == "nan" else cell for cell in line.split(","))
            handle.write(f"{label},{line}\n")


def _write_json(path: Path, data: object) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n", durable=False)


@dataclass
class _Cohort:
    trait: str
    cohort_id: str
    record: dict
    samples: list[str]
    genes: list[str]
    expression: np.ndarray  # samples x genes
    clinical: dict[str, np.ndarray]  # feature -> value per sample


def _make_cohort(
    rng: np.random.Generator,
    trait: str,
    cohort_id: str,
    spec: SynthSpec,
    *,
    universe: list[str],
    related: list[str],
) -> _Cohort:
    n = int(rng.integers(spec.samples[0], spec.samples[1] + 1))
    state = rng.random()
    gene_ok = state >= spec.unusable_share * 0.4
    trait_ok = state >= spec.unusable_share * 0.7
    biased = trait_ok and gene_ok and state < spec.unusable_share
    has_age, has_gender = bool(rng.random() < 0.6), bool(rng.random() < 0.6)
    prefix = "TCGA-" if cohort_id == "Xena" else "GSM"
    first = int(rng.integers(100_000, 9_000_000))
    samples = [f"{prefix}{first + i}" for i in range(n)]
    keep = rng.random(len(universe)) < 0.97
    genes = [g for g, k in zip(universe, keep, strict=True) if k]
    status = rng.integers(0, 2, n).astype(float)
    if biased:
        status[:] = 1.0
    expression = rng.normal(8.0, 1.5, size=(n, len(genes)))
    related_set = set(related)
    effect_columns = [j for j, g in enumerate(genes) if g in related_set]
    expression[:, effect_columns] += np.outer(status, rng.normal(0.0, 1.2, len(effect_columns)))
    clinical = {trait: status}
    if has_age:
        clinical["Age"] = np.round(rng.normal(55, 12, n))
    if has_gender:
        clinical["Gender"] = rng.integers(0, 2, n).astype(float)
    record = CohortRecord.decide(
        cohort_id,
        gene=gene_ok,
        trait=trait_ok,
        biased=biased,
        age=has_age,
        gender=has_gender,
        size=n,
        note="INFO: generated by genotex.workflows",
    ).to_dict()
    return _Cohort(trait, cohort_id, record, samples, genes, expression, clinical)


def _write_cohort(output: Path, cohort: _Cohort, *, write: dict[str, bool]) -> None:
    base = output / "preprocess" / cohort.trait
    if cohort.record["is_gene_available"] and write["gene"]:
        _write_csv(
            base / "gene_data" / f"{cohort.cohort_id}.csv",
            "",
            cohort.samples,
            cohort.genes,
            cohort.expression.T,
        )
    features = list(cohort.clinical)
    clinical = np.vstack([cohort.clinical[f] for f in features])
    if cohort.record["is_trait_available"] and write["clinical"]:
        _write_csv(
            base / "clinical_data" / f"{cohort.cohort_id}.csv",
            "",
            cohort.samples,
            features,
            clinical,
        )
    if cohort.record["is_usable"] and write["linked"]:
        linked = np.hstack([clinical.T, cohort.expression])
        _write_csv(
            base / f"{cohort.cohort_id}.csv", "", [*features, *cohort.genes], cohort.samples, linked
        )


def _perturb(rng: np.random.Generator, cohort: _Cohort, spec: SynthSpec) -> _Cohort:
    """The prediction's version of a cohort: samples and genes dropped, noise, a flipped verdict."""
    keep_samples = rng.random(len(cohort.samples)) >= rng.uniform(0.0, 0.1)
    keep_genes = rng.random(len(cohort.genes)) >= rng.uniform(0.0, 0.05)
    expression = cohort.expression[keep_samples][:, keep_genes]
    expression = expression + rng.normal(0.0, spec.noise, expression.shape)
    expression[rng.random(expression.shape) < 0.002] = np.nan
    clinical = {k: v[keep_samples].copy() for k, v in cohort.clinical.items()}
    record = dict(cohort.record)
    if rng.random() < 0.1:  # a wrong availability verdict
        flipped = not record["is_available"]
        record.update(
            is_available=flipped,
            is_gene_available=flipped,
            is_trait_available=flipped,
            is_usable=flipped,
            is_biased=False if flipped else None,
        )
        for key in ("has_age", "has_gender"):
            record[key] = (key[4:].capitalize() in clinical) if flipped else None
    if record["is_available"]:
        record["sample_size"] = int(keep_samples.sum())
    record["note"] = "INFO: prediction generated by genotex.workflows"
    return replace(
        cohort,
        record=record,
        samples=[s for s, k in zip(cohort.samples, keep_samples, strict=True) if k],
        genes=[g for g, k in zip(cohort.genes, keep_genes, strict=True) if k],
        expression=expression,
        clinical=clinical,
    )


def _result(genes: list[str], rng: np.random.Generator) -> dict:
    coefficients = np.round(rng.normal(0, 1, len(genes)), 6).tolist()
    order = np.argsort(-np.abs(coefficients), kind="stable")
    accuracy = float(np.round(rng.uniform(55, 95), 4))
    return {
        "significant_genes": {
            "Variable": [genes[i] for i in order],
            "Coefficient": [coefficients[i] for i in order],
            "Absolute Coefficient": [abs(coefficients[i]) for i in order],
        },
        "cv_performance": {
            "prediction": {
                "accuracy": accuracy,
                "f1": float(np.round(accuracy - rng.uniform(0, 10), 4)),
            },
        },
    }


def _task_info(traits: list[str], related: dict[str, list[str]]) -> dict:
    """Each trait conditioned on Age, Gender and the next trait (one trait: Age and Gender)."""
    if len(traits) == 1:
        return {traits[0]: {"related_genes": related[traits[0]], "conditions": ["Age", "Gender"]}}
    return {
        t: {
            "related_genes": related[t],
            "conditions": ["Age", "Gender", traits[(i + 1) % len(traits)]],
        }
        for i, t in enumerate(traits)
    }


def _draw_cohorts(
    rng: np.random.Generator,
    spec: SynthSpec,
    traits: list[str],
    universe: list[str],
    related: dict[str, list[str]],
) -> dict[str, list[_Cohort]]:
    """Cohorts spread round-robin over the traits; one of them is a TCGA cohort (`Xena`)."""
    used_ids: set[int] = set()
    cohorts: dict[str, list[_Cohort]] = {t: [] for t in traits}
    for index in range(spec.n_cohorts):
        trait = traits[index % len(traits)]
        if index == len(traits) * 2 + 1:
            cohort_id = "Xena"
        else:
            number = int(rng.integers(10_000, 300_000))
            while number in used_ids:
                number += 1
            used_ids.add(number)
            cohort_id = f"GSE{number}"
        cohorts[trait].append(
            _make_cohort(rng, trait, cohort_id, spec, universe=universe, related=related[trait])
        )
    return cohorts


def _write_preprocess(
    rng: np.random.Generator,
    spec: SynthSpec,
    cohorts: dict[str, list[_Cohort]],
    ref_output: Path,
    pred_output: Path,
) -> None:
    """The reference's tables and records, and the prediction's perturbed, partly missing ones."""
    traits = list(cohorts)
    kinds = ("gene", "clinical", "linked")
    for trait in traits:
        records = {c.cohort_id: c.record for c in cohorts[trait]}
        _write_json(ref_output / "preprocess" / trait / "cohort_info.json", records)
        predicted = [_perturb(rng, c, spec) for c in cohorts[trait]]
        if trait != traits[-1] or len(traits) == 1:  # the last trait's record file is left out
            records = {c.cohort_id: c.record for c in predicted}
            _write_json(pred_output / "preprocess" / trait / "cohort_info.json", records)
        for cohort, guess in zip(cohorts[trait], predicted, strict=True):
            _write_cohort(ref_output, cohort, write=dict.fromkeys(kinds, True))
            missing = {kind: bool(rng.random() >= spec.missing_share) for kind in kinds}
            _write_cohort(pred_output, guess, write=missing)


def _write_results(
    rng: np.random.Generator,
    spec: SynthSpec,
    cohorts: dict[str, list[_Cohort]],
    task_info: dict[str, Any],
    *,
    universe: list[str],
    related: dict[str, list[str]],
    ref_output: Path,
    pred_output: Path,
) -> None:
    """Reference gene lists per problem; predictions that keep ~70% of them plus noise.

    `spec.malformed_results` two-step predictions hold a string where the list should be.
    """
    malformed_left = spec.malformed_results
    for trait in cohorts:
        for condition in (None, *task_info.get(trait, {}).get("conditions", ())):
            if not [c for c in cohorts[trait] if c.record["is_usable"]]:
                continue
            others = rng.choice(len(universe), min(40, len(universe)), replace=False)
            pool = list(dict.fromkeys([*related[trait], *(universe[i] for i in others)]))
            n_genes = int(rng.integers(min(5, len(pool)), min(len(pool), 45) + 1))
            truth = [pool[i] for i in rng.choice(len(pool), n_genes, replace=False)]
            name = regress_file_name(condition)
            reference = _result(list(dict.fromkeys(truth)), rng)
            _write_json(ref_output / "regress" / trait / name, reference)
            if rng.random() < spec.missing_share:
                continue
            kept = [g for g in truth if rng.random() < 0.7]
            n_extra = int(rng.integers(0, min(15, len(universe))))
            extra = [universe[i] for i in rng.choice(len(universe), n_extra, replace=False)]
            guess = list(dict.fromkeys(kept + extra))
            result = _result(guess, rng)
            if malformed_left > 0 and condition is not None and condition not in ("Age", "Gender"):
                result["significant_genes"]["Variable"] = ", ".join(guess)  # a string, not a list
                malformed_left -= 1
            _write_json(pred_output / "regress" / trait / name, result)


@generates_benchmark
def write_example(folder: str | Path, spec: SynthSpec = DEMO_SPEC, *, seed: int = 0) -> Example:
    """Write `ref/` (metadata + output), `pred/output` into `folder`; return their paths.

    Everything is drawn from one generator seeded with `seed`: the same seed
    gives the same bytes.
    """
    root = Path(folder)
    rng = np.random.default_rng(seed)
    universe = _gene_universe(spec.n_genes)
    traits = _trait_names(spec.n_traits)
    related = {
        t: [universe[i] for i in rng.choice(len(universe), spec.n_related, replace=False)]
        for t in traits
    }
    task_info = _task_info(traits, related)
    ref_output, pred_output = root / "ref" / "output", root / "pred" / "output"
    task_info_path = root / "ref" / "metadata" / "task_info.json"
    _write_json(task_info_path, task_info)
    cohorts = _draw_cohorts(rng, spec, traits, universe, related)
    _write_preprocess(rng, spec, cohorts, ref_output, pred_output)
    _write_results(
        rng,
        spec,
        cohorts,
        task_info,
        universe=universe,
        related=related,
        ref_output=ref_output,
        pred_output=pred_output,
    )
    return Example(root, ref_output, pred_output, task_info_path)
