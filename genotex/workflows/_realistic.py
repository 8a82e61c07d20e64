"""`genotex demo --realistic`: a generated benchmark whose cohorts vary as real ones do.

The plain demo's cohorts are uniform (one phrasing, one platform layout, every trait usable),
so a careful reader and `genotex baseline` write the same files. Here each GEO series is
written the way a kind of real series is (`realistic_cohorts.json`, shipped with the package;
its row keys and value shapes are the ones most common in the labelled clinical records of the
benchmark's development split, which is what the baseline's recipe proposer was fitted on, so
the baseline reads these phrasings in-sample):

- the trait, age and gender in rows of varying order, keys and values (``Sex: F``,
  ``sex (female=1, male=0): 1``, ``age: 25y``, ``subject status: non-asthmatic``), beside
  rows that are no variable (tissue, batch, time);
- a series whose trait is constant (every sample obese) and one that records no trait at
  all (a cell-line experiment);
- a platform whose symbols are in a column named otherwise (``GENE_SYMBOL``, beside ORF IDs);
- TCGA folders as TCGA names them, of cancers only: liver cancer's (LIHC), the right one for
  the Liver_Cancer trait, and melanoma's (SKCM), a skin cancer that is no trait's cohort (a
  tempting wrong answer for Psoriasis, which, not being a cancer, has no TCGA cohort);
- an obesity series in two batches (240 samples, batch partly confounded with the trait),
  where the batch-effect test calls for the linear mixed model;
- asthma series in which obesity (the two-step condition) drives its own genes and goes with
  asthma, so an answer to Asthma | Obesity that ignores the condition picks obesity's genes.

The reference answers are the generator's truth for each cohort (its tables and record) and,
for every problem,
the published regression pipeline's answer over those true tables (as the benchmark's reference
answers are made). The same seed gives the same bytes on one machine (the linear mixed model's
answers, as the reference's, can differ in their last bits across BLAS builds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..core import CohortInfo, CohortRecord, generates_benchmark, write_table
from ._generated import record_demo, replace_other_demo
from ._raw_benchmark import (
    KeyFit,
    RawBenchmark,
    _Cohort,
    _genes,
    _platform_rows,
    _Series,
    _simulate,
    _write_metadata,
    _write_reference,
    _write_series,
    _write_xena,
    sorted_genes,
)

__all__ = ["REALISTIC_CONDITIONS", "write_realistic_benchmark"]

#: The realistic benchmark's traits and each one's conditions: the plain demo's three, and a
#: cancer whose only cohort is a TCGA one.
REALISTIC_CONDITIONS = {
    "Asthma": ["Age", "Gender", "Obesity"],
    "Obesity": ["Gender"],
    "Psoriasis": ["Age"],
    "Liver_Cancer": ["Gender"],
}


def _styles() -> list[dict]:
    text = resources.files("genotex.workflows").joinpath("data/realistic_cohorts.json")
    return json.loads(text.read_text(encoding="utf-8"))["cohorts"]


def _value(template: str, c: _Cohort, i: int, rng: np.random.Generator) -> str:
    """One sample's cell: ``{case|control}``, ``{age}``, ``{sex}`` filled from the truth."""
    age = int(c.age[i])
    return template.format(age=age, age_suffix=f"{age}{rng.choice(['y', 'Y'])}")


def _rows(style: dict, c: _Cohort, rng: np.random.Generator) -> list[list[str]]:
    """The characteristics rows of a series, one cell per sample, in the style's order."""
    rows = []
    for row in style["rows"]:
        cells = []
        for i in range(len(c.samples)):
            if row["kind"] == "trait":
                text = row["case"] if c.status[i] else row["control"]
            elif row["kind"] == "gender":
                text = row["male"] if c.gender[i] else row["female"]
            elif row["kind"] == "age":
                text = row["template"]
            elif row["kind"] == "batch":
                text = row["values"][int(c.batch[i])]  # type: ignore[attr-defined]
            else:
                text = row["values"][i % len(row["values"])]
            cells.append(f"{row['key']}: {_value(text, c, i, rng)}")
        rows.append(cells)
    return rows


def _platform(style: dict, probes: list[str], annotation: list[str]) -> list[list[str]]:
    layout = style.get("platform", "standard")
    if layout == "standard":
        rows = [[p, a, ""] for p, a in zip(probes, annotation, strict=True)]
        return [["ID", "Gene Symbol", "SPOT_ID"], *rows]
    header = [["ID", "ORF", "GENE_SYMBOL", "SPOT_ID"]]  # symbols under another column's name
    return header + [[p, f"ORF{70000 + i}", a, ""]
                     for i, (p, a) in enumerate(zip(probes, annotation, strict=True))]  # fmt: skip


@dataclass(frozen=True)
class _Plan:
    """The benchmark's genes: each trait's planted genes and effects, and known extras."""

    genes: list[str]
    planted: dict[str, list[str]]
    effects: dict[str, list[float]]
    known_extra: dict[str, list[str]]


def _cohort(rng: np.random.Generator, style: dict, plan: _Plan, index: int) -> _Cohort:
    """A cohort's truth: its samples' status, age, gender (and batch), and gene values."""
    trait, n = style["trait"], int(style.get("samples", rng.integers(60, 91)))
    gse = f"GSE{200001 + index}"
    samples = [f"GSM{8000000 + 1000 * index + i}" for i in range(n)]
    status = None
    if style.get("trait_available", True) is False:
        status = np.ones(n)
    cohort = _simulate(rng, trait, gse, samples, plan.genes, planted=plan.planted[trait],
                       effects=plan.effects[trait], status=status)  # fmt: skip
    cohort.trait_available = style.get("trait_available", True)
    if "condition_effect" in style:  # obesity goes with asthma, and drives its own genes
        other = style["condition_effect"]
        follows = rng.random(n) < other["follows"]
        condition = np.where(follows, cohort.status, rng.integers(0, 2, n)).astype(float)
        index_of = {g: k for k, g in enumerate(plan.genes)}
        for gene, effect in zip(plan.planted[other["trait"]], plan.effects[other["trait"]],
                                strict=True):  # fmt: skip
            cohort.genes.iloc[index_of[gene]] += np.round(other["scale"] * effect * condition, 4)
    batch = np.zeros(n, dtype=int)
    if style.get("batches"):  # batch 1 holds a share of the cases (`batches`)
        batch = np.where(rng.random(n) < style["batches"], cohort.status,
                         1 - cohort.status).astype(int)  # fmt: skip
        shift = rng.normal(0, 1.5, len(plan.genes))
        cohort.genes.loc[:, batch == 1] += np.round(shift[:, None], 4)
    cohort.batch = batch  # type: ignore[attr-defined]
    return cohort


def _write_truth(reference: Path, c: _Cohort, style: dict) -> None:
    if style.get("records_nothing"):  # no trait, age or gender row: only the gene table
        base = reference / "preprocess" / c.trait
        write_table(base / "gene_data" / f"{c.cohort}.csv", sorted_genes(c.genes))
        record = CohortRecord.decide(
            c.cohort, gene=True, trait=False, biased=False, age=False, gender=False,
            size=len(c.samples), note="generated truth",
        )  # fmt: skip
        CohortInfo.update(base / "cohort_info.json", record)
        return
    _write_reference(reference, c)


@generates_benchmark
def write_realistic_benchmark(folder: str | Path, *, seed: int = 7) -> RawBenchmark:
    """A benchmark root (input/, metadata/, reference/output/) whose cohorts vary as real
    GEO and TCGA cohorts do (module docstring); no recipes: what `genotex baseline` and an
    agent start from.
    """
    root = Path(folder)
    replaced = replace_other_demo(root, "realistic", seed)
    rng = np.random.default_rng(seed)
    genes = _genes(240)
    traits = list(REALISTIC_CONDITIONS)
    planted = {t: list(rng.choice(genes[10:], 8, replace=False)) for t in traits}
    effects = {
        t: list(np.sort(rng.uniform(0.8, 2.0, 8))[::-1] * rng.choice([-1, 1], 8)) for t in traits
    }
    known_extra = {t: list(rng.choice(genes[10:], 6, replace=False)) for t in traits}
    plan = _Plan(genes, planted, effects, known_extra)
    aliases = _write_metadata(root, genes, planted, known_extra, REALISTIC_CONDITIONS)
    reference = root / "reference" / "output"
    for index, style in enumerate(_styles()):
        c = _cohort(rng, style, plan, index)
        probes, annotation, values = _platform_rows(c, aliases, rng)
        background = [f'!Series_{k}\t"{v}"' for k, v in style["background"].items()]
        series = _Series(_rows(style, c, rng), background, _platform(style, probes, annotation))
        _write_series(root, c, f"GPL{91000 + index}", (probes, values), series)
        _write_truth(reference, c, style)
    _write_tcga(root, rng, plan, reference)
    keys = _write_answers(reference, root / "metadata" / "task_info.json")
    record_demo(root, "realistic", seed)
    return RawBenchmark(root, reference, root / "metadata" / "task_info.json", keys, replaced)


def _write_answers(reference: Path, task_info: Path) -> tuple[KeyFit, ...]:
    """Every problem's reference answer, as the benchmark's are made: the published regression
    pipeline (reference mode, one BLAS thread) over the true preprocessed cohorts. So a
    conditional problem's answer is the conditional analysis', and the batched cohort's the
    linear mixed model's, at chance as it is (the guide says why); how each was reached.
    """
    from ..core import ProblemId, TaskInfo, accuracy_at_chance
    from ..regression import ProblemSkipped, answer_problem, write_result

    info = TaskInfo.read(task_info)
    keys = []
    for trait, conditions in REALISTIC_CONDITIONS.items():
        for condition in (None, *conditions):
            try:
                result = answer_problem(reference / "preprocess", ProblemId(trait, condition), info)
            except ProblemSkipped:  # no cohort (pair) answers it: no reference answer
                continue
            write_result(reference / "regress", result)
            cv = result.cv_performance
            flags = getattr(result.method, "flags", ())
            keys.append(KeyFit(
                result.problem.key, result.model, len(result.genes),
                cv.get("prediction", {}).get("accuracy"), cv.get("selection", {}).get("precision"),
                accuracy_at_chance(cv) is not None, "column_order_dependent" in flags,
            ))  # fmt: skip
    return tuple(keys)


def _write_tcga(root: Path, rng: np.random.Generator, plan: _Plan, reference: Path) -> None:
    """Liver cancer's Xena cohort (tumour against normal tissue), and a melanoma cohort beside
    it that is no trait's: the wrong folder for every trait, Psoriasis's skin included.
    """
    for folder, code, trait in (("TCGA_Liver_Cancer_(LIHC)", "DD", "Liver_Cancer"),
                                ("TCGA_Skin_Cutaneous_Melanoma_(SKCM)", "EE", None)):  # fmt: skip
        n = int(rng.integers(60, 91))
        barcodes = [f"TCGA-{code}-{1000 + i}-{'11' if i % 4 == 0 else '01'}" for i in range(n)]
        tumour = np.array([0.0 if b.endswith("11") else 1.0 for b in barcodes])
        planted = plan.planted[trait] if trait else list(plan.genes[:8])
        effects = plan.effects[trait] if trait else [1.5] * 8
        c = _simulate(rng, trait or "Melanoma", "Xena", barcodes, plan.genes, planted=planted,
                      effects=effects, status=tumour)  # fmt: skip
        _write_xena(root, c, folder_name=folder)
        if trait:
            _write_reference(reference, c)
