"""A seeded generator of a small raw benchmark: GEO and Xena inputs, recipes, and the true answers.

`genotex demo` runs the whole pipeline on it. The raw files have the real
formats: series matrices (quoted IDs, "key: value" characteristics rows),
family SOFT files (a platform table with ` /// ` multi-symbol probes and some
probes annotated with aliases), a Xena cohort (clinicalMatrix and a gzipped
HiSeqV2_PANCAN table). The generator also writes the answers it knows: the
gene, clinical and linked tables of every cohort, `cohort_info.json`, and for
every problem the planted genes of its trait, ranked by effect size.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import (
    CohortInfo,
    CohortRecord,
    ResultFile,
    TaskInfo,
    generates_benchmark,
    regress_file_name,
    write_bytes_atomic,
    write_table,
    write_text_atomic,
)
from ..preprocessing import Recipe
from ._generated import KeyFit, RawBenchmark, record_demo, replace_other_demo

__all__ = ["KeyFit", "RawBenchmark", "write_raw_benchmark"]

_TRAITS = ("Asthma", "Obesity", "Psoriasis")
_PREFIXES = ("ADAM", "CASP", "CDK", "FOX", "GATA", "IL", "KRT", "MMP", "SOX", "TNF", "WNT", "ZNF")


def _genes(n: int) -> list[str]:
    return [f"{_PREFIXES[i % len(_PREFIXES)]}{i // len(_PREFIXES) + 1}" for i in range(n)]


def _write_gz(path: Path, text: str) -> None:
    """Gzip `text` to `path`, with no time in the header: the same seed gives the same bytes."""
    data = gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)
    write_bytes_atomic(path, data, durable=False)  # replaced: never through a link


def _quoted(cells: Iterable[object]) -> str:
    return "\t".join(f'"{c}"' for c in cells)


@dataclass
class _Cohort:
    trait: str
    cohort: str
    samples: list[str]
    status: np.ndarray
    age: np.ndarray
    gender: np.ndarray
    genes: pd.DataFrame  # true gene values, genes x samples
    trait_available: bool = True


def _simulate(
    rng: np.random.Generator,
    trait: str,
    cohort: str,
    samples: list[str],
    genes: list[str],
    *,
    planted: list[str],
    effects: list[float],
    all_cases: bool = False,
    status: np.ndarray | None = None,
) -> _Cohort:
    n = len(samples)
    if status is None:
        status = np.ones(n) if all_cases else rng.permutation(np.arange(n) % 2).astype(float)
    age = np.round(rng.normal(52, 11, n))
    gender = rng.integers(0, 2, n).astype(float)
    values = rng.normal(7.5, 1.0, size=(len(genes), n))
    index = {g: i for i, g in enumerate(genes)}
    for gene, effect in zip(planted, effects, strict=True):
        values[index[gene]] += effect * status
    values += 0.02 * (age - 52)[None, :] * (rng.random((len(genes), 1)) < 0.05)
    table = pd.DataFrame(np.round(values, 4), index=pd.Index(genes, name="Gene"), columns=samples)
    return _Cohort(trait, cohort, samples, status, age, gender, table, not all_cases)


def _demo_recipe(c: _Cohort) -> Recipe:
    """The hand-written recipe a demo cohort comes with (trait from row 0, Age 1, Gender 2)."""
    trait = {"row": 0, "rules": [{"match": "control", "value": 0}, {"match": "case", "value": 1}]}
    gender_rules = [
        {"match": "female", "how": "exact", "value": 0},
        {"match": "male", "how": "exact", "value": 1},
    ]
    return Recipe.from_dict(
        {
            "trait": c.trait,
            "cohort": c.cohort,
            "note": "generated demo cohort",
            "input": {"probe_column": "ID", "gene_column": "Gene Symbol"},
            "variables": {
                "trait": trait
                if c.trait_available
                else {"available": False, "note": "every sample is a case"},
                "age": {"row": 1, "numeric": True},
                "gender": {"row": 2, "rules": gender_rules},
            },
        }
    )


def _platform_rows(
    c: _Cohort, aliases: dict[str, str], rng: np.random.Generator
) -> tuple[list[str], list[str], list[np.ndarray]]:
    """(probe IDs, their annotated symbols, their rows): one probe per gene (some annotated by
    an alias), plus shared ` /// ` probes, each adding half its value to both genes' truth.
    """
    probes, annotation, rows = [], [], []
    for i, gene in enumerate(c.genes.index):
        probes.append(f"{1000 + i}_at")
        annotation.append(aliases.get(gene, gene))
        rows.append(c.genes.loc[gene].to_numpy().copy())
    genes = list(c.genes.index)
    for k in range(0, 10, 2):
        a, b = genes[k], genes[k + 1]
        probes.append(f"{9000 + k}_s_at")
        annotation.append(f"{a} /// {b}")
        shared = np.round(rng.normal(6.0, 0.5, len(c.samples)), 4)
        rows.append(shared)
        c.genes.loc[a] += shared / 2
        c.genes.loc[b] += shared / 2
    return probes, annotation, rows


@dataclass(frozen=True)
class _Series:
    """What a GEO series' files say beyond the values: its characteristics rows, its
    background lines, and its platform table (header, then a row of cells per probe).
    """

    characteristics: list[list[str]]
    background: list[str]
    platform: list[list[str]]


def _write_series(
    root: Path, c: _Cohort, gpl: str, values: tuple[list[str], list[np.ndarray]], series: _Series
) -> None:
    """A series matrix and a family SOFT file, in GEO's formats; `values` is (probe IDs,
    their rows).
    """
    probes, probe_rows = values
    folder = root / "input" / "GEO" / c.trait / c.cohort
    lines = [*series.background, f"!Sample_geo_accession\t{_quoted(c.samples)}"]
    lines += [f"!Sample_characteristics_ch1\t{_quoted(row)}" for row in series.characteristics]
    lines += ["!series_matrix_table_begin", f'"ID_REF"\t{_quoted(c.samples)}']
    for probe, row in zip(probes, probe_rows, strict=True):
        lines.append(f'"{probe}"\t' + "\t".join(repr(float(v)) for v in row))
    lines.append("!series_matrix_table_end")
    _write_gz(folder / f"{c.cohort}_series_matrix.txt.gz", "\n".join(lines) + "\n")
    soft = [
        f"^SERIES = {c.cohort}",
        f"!Series_title = {c.trait} (generated)",
        f"^PLATFORM = {gpl}",
        "!Platform_organism = Homo sapiens",
        "!platform_table_begin",
    ]
    soft += ["\t".join(cells) for cells in series.platform]
    soft.append("!platform_table_end")
    for sample, *cells in zip(c.samples, *series.characteristics, strict=True):
        soft += [f"^SAMPLE = {sample}", f"!Sample_title = {sample}"]
        soft += [f"!Sample_characteristics_ch1 = {cell}" for cell in cells]
    _write_gz(folder / f"{c.cohort}_family.soft.gz", "\n".join(soft) + "\n")


def _write_geo(
    root: Path,
    c: _Cohort,
    gpl: str,
    aliases: dict[str, str],
    rng: np.random.Generator,
    *,
    recipes: bool = True,
) -> None:
    """Series matrix + family SOFT; probes: one per gene, plus shared ` /// ` probes."""
    probes, annotation, rows = _platform_rows(c, aliases, rng)
    characteristics = [
        [f"disease state: {'case' if s else 'control'}" for s in c.status],
        [f"age: {int(a)}" for a in c.age],
        [f"gender: {'male' if g else 'female'}" for g in c.gender],
    ]
    background = [
        f'!Series_title\t"Expression profiling of {c.trait.replace("_", " ").lower()} '
        f'({c.cohort}, generated)"',
        '!Series_summary\t"Generated by genotex for its demo."',
        f'!Series_overall_design\t"Cases and controls, {len(c.samples)} samples."',
    ]
    platform = [["ID", "Gene Symbol", "SPOT_ID"]]
    platform += [[p, a, ""] for p, a in zip(probes, annotation, strict=True)]
    _write_series(root, c, gpl, (probes, rows), _Series(characteristics, background, platform))
    if recipes:
        _demo_recipe(c).write(root / "recipes" / c.trait / f"{c.cohort}.json")


def _write_xena(root: Path, c: _Cohort, *, folder_name: str | None = None) -> None:
    folder = root / "input" / "TCGA" / (folder_name or f"TCGA_{c.trait}_(DEMO)")
    folder.mkdir(parents=True, exist_ok=True)
    clinical = ["sampleID\tage_at_initial_pathologic_diagnosis\tgender\thistological_type"]
    clinical += [
        f"{s}\t{int(a)}\t{'MALE' if g else 'FEMALE'}\tgenerated"
        for s, a, g in zip(c.samples, c.age, c.gender, strict=True)
    ]
    write_text_atomic(folder / "TCGA.DEMO.sampleMap_DEMO_clinicalMatrix",
                      "\n".join(clinical) + "\n", durable=False)  # fmt: skip
    lines = ["sample\t" + "\t".join(c.samples)]
    lines += [f"{g}\t" + "\t".join(repr(float(v)) for v in c.genes.loc[g]) for g in c.genes.index]
    _write_gz(folder / "TCGA.DEMO.sampleMap_HiSeqV2_PANCAN.gz", "\n".join(lines) + "\n")


def sorted_genes(genes: pd.DataFrame) -> pd.DataFrame:
    """A gene table's rows in the order pandas' grouping by symbol gives them (sorted)."""
    return genes.sort_index(kind="stable")


def _write_reference(out: Path, c: _Cohort) -> None:
    """The generator's answer for a cohort: its true tables and record (no missing values).

    The genes are written sorted by symbol, as the paper's preprocessing leaves them (its
    probe mapping and symbol normalization group by symbol), so that a team that preprocesses
    correctly writes these tables exactly, column order included: the reference-mode
    regression depends on that order.
    """
    base = out / "preprocess" / c.trait
    genes = sorted_genes(c.genes)
    write_table(base / "gene_data" / f"{c.cohort}.csv", genes)
    record = CohortRecord.decide(
        c.cohort,
        gene=True,
        trait=c.trait_available,
        biased=False,
        age=True,
        gender=True,
        size=len(c.samples),
        note="generated truth",
    )
    if c.trait_available:
        clinical = pd.DataFrame(
            [c.status, c.age, c.gender], index=[c.trait, "Age", "Gender"], columns=c.samples
        )
        write_table(base / "clinical_data" / f"{c.cohort}.csv", clinical)
        linked = pd.concat([clinical, genes]).T
        linked.index.name = "sampleID" if c.cohort == "Xena" else None
        write_table(base / f"{c.cohort}.csv", linked)
    CohortInfo.update(base / "cohort_info.json", record)


#: Each trait's conditions: Age, Gender and a two-step pair (Asthma | Obesity).
_CONDITIONS = {"Asthma": ["Age", "Gender", "Obesity"], "Obesity": ["Gender"], "Psoriasis": ["Age"]}


def _write_metadata(
    root: Path,
    genes: list[str],
    planted: dict[str, list[str]],
    known_extra: dict[str, list[str]],
    conditions: dict[str, list[str]] = _CONDITIONS,
) -> dict[str, str]:
    """task_info.json and gene_synonym.json; returns the aliases the platforms use for some genes.

    Each trait of `conditions` (in its order) knows its planted genes, then its extra known
    genes, each once (an extra drawn among the planted is not listed again). Official symbols
    map to themselves; genes 20-39 are annotated by an alias (e.g. MMP2-A) that the synonym
    table resolves.
    """
    task_info = {
        t: {"related_genes": list(dict.fromkeys(planted[t] + known_extra[t])),
            "conditions": listed}
        for t, listed in conditions.items()
    }  # fmt: skip
    TaskInfo.from_dict(task_info).write(root / "metadata" / "task_info.json")
    aliases = {g: f"{g}-A" for g in genes[20:40]}
    synonyms = {g.upper(): g for g in genes} | {a.upper(): g for g, a in aliases.items()}
    text = json.dumps(synonyms, indent=1, sort_keys=True) + "\n"
    write_text_atomic(root / "metadata" / "gene_synonym.json", text, durable=False)
    return aliases


def _write_cohorts(
    root: Path,
    rng: np.random.Generator,
    genes: list[str],
    *,
    planted: dict[str, list[str]],
    effects: dict[str, list[float]],
    aliases: dict[str, str],
    samples: tuple[int, int],
    recipes: bool = True,
) -> list[_Cohort]:
    """Five GEO series (one of them all cases) and one Xena cohort, with their true tables."""
    cohorts: list[_Cohort] = []
    next_id = iter(range(100001, 100100))
    for trait in _TRAITS:
        for k in range(2 if trait != "Psoriasis" else 1):
            gse = f"GSE{next(next_id)}"
            n = int(rng.integers(samples[0], samples[1] + 1))
            gsm = [f"GSM{7000000 + 100 * int(gse[3:]) % 10**6 + i}" for i in range(n)]
            all_cases = trait == "Obesity" and k == 1
            cohort = _simulate(
                rng,
                trait,
                gse,
                gsm,
                genes,
                planted=planted[trait],
                effects=effects[trait],
                all_cases=all_cases,
            )
            _write_geo(root, cohort, f"GPL{90000 + len(cohorts)}", aliases, rng, recipes=recipes)
            cohorts.append(cohort)
    n = int(rng.integers(samples[0], samples[1] + 1))
    barcodes = [f"TCGA-D{i // 100}-{1000 + i}-{'11' if i % 4 == 0 else '01'}" for i in range(n)]
    tumour = np.array([0.0 if b.endswith("11") else 1.0 for b in barcodes])
    xena = _simulate(
        rng,
        "Psoriasis",
        "Xena",
        barcodes,
        genes,
        planted=planted["Psoriasis"],
        effects=effects["Psoriasis"],
        status=tumour,
    )
    _write_xena(root, xena)
    return [*cohorts, xena]


@generates_benchmark
def write_raw_benchmark(
    folder: str | Path,
    *,
    seed: int = 7,
    n_genes: int = 240,
    samples: tuple[int, int] = (60, 90),
    recipes: bool = True,
) -> RawBenchmark:
    """A small benchmark root: input/, metadata/, recipes/, and reference/output/ (the truth).

    With `recipes=False` the hand-written recipes are left out (what
    `genotex baseline` starts from).

    Each trait has 8 planted genes; every problem's true answer is its trait's
    planted genes ranked by effect size.
    """
    root = Path(folder)
    kind = "plain" if recipes else "plain (inputs only)"
    replaced = replace_other_demo(root, kind, seed)
    rng = np.random.default_rng(seed)
    genes = _genes(n_genes)
    planted = {t: list(rng.choice(genes[10:], 8, replace=False)) for t in _TRAITS}
    effects = {
        t: list(np.sort(rng.uniform(0.8, 2.0, 8))[::-1] * rng.choice([-1, 1], 8)) for t in _TRAITS
    }
    known_extra = {t: list(rng.choice(genes[10:], 6, replace=False)) for t in _TRAITS}
    aliases = _write_metadata(root, genes, planted, known_extra)
    reference = root / "reference" / "output"
    written = _write_cohorts(
        root,
        rng,
        genes,
        planted=planted,
        effects=effects,
        aliases=aliases,
        samples=samples,
        recipes=recipes,
    )
    for cohort in written:
        _write_reference(reference, cohort)
    for trait in _TRAITS:
        by_effect = sorted(
            zip(np.abs(effects[trait]), planted[trait], strict=True), key=lambda p: -p[0]
        )
        ranked = tuple(g for _, g in by_effect)
        for condition in (None, *_CONDITIONS[trait]):
            ResultFile(ranked).write(reference / "regress" / trait / regress_file_name(condition))
    record_demo(root, kind, seed)
    return RawBenchmark(root, reference, root / "metadata" / "task_info.json", replaced=replaced)
