"""Proposals at the edges: a GEO cohort folder, a JSONL file of records, a reviewable TOML.

`propose_cohort` reads a cohort folder (series matrix or family SOFT) and
adds what the files say beyond the text (series type, organism, molecule);
`propose_records` answers every line of a clinical-records file and never
stops on a bad one; `proposal_toml` writes the recipe with its evidence as
comments, marked on its first line so `genotex baseline` knows it may
replace it (a recipe without the mark is hand-written and kept).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import tomlkit

from ..._version import __version__
from ...core import GenotexError, json_line, parse_json, read_regular_bytes, write_text_atomic
from .._cohort_files import find_matrix
from .._geo import characteristics_dictionary, read_series_matrix
from .._soft import SoftFile, read_soft
from ._propose import Proposal, propose_recipe

__all__ = [
    "PROPOSED_MARK",
    "CohortProposal",
    "RecordsSummary",
    "is_proposed",
    "cohort_record",
    "propose_cohort",
    "propose_records",
    "proposal_toml",
]

#: The first line of every recipe genotex wrote itself (and may therefore rewrite).
PROPOSED_MARK = "# proposed by genotex"
_RECORD_KEYS = ("trait", "cohort", "is_gene_available", "trait_row", "age_row", "gender_row")
_NOT_EXPRESSION_TYPES = re.compile(
    r"methylation|genome binding|occupancy|non-coding rna|snp|genome variation|protein", re.I
)


@dataclass(frozen=True)
class CohortProposal:
    """A cohort's proposal and every characteristics row it was made from (all values)."""

    proposal: Proposal
    characteristics: dict[int, list[str]]

    def toml(self) -> str:
        return proposal_toml(self.proposal, self.characteristics)


def is_proposed(path: str | Path) -> bool:
    """Whether a recipe file was written by genotex's proposer (its first line is the mark)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().startswith(PROPOSED_MARK)
    except OSError:
        return False


def _facts_verdict(attributes: Mapping[str, Iterable[str]]) -> str | None:
    """Why the files' metadata says the series is not human gene expression, or None.

    `attributes`: metadata key -> its cells (`SeriesMatrix.attributes`, or the
    series and sample attributes of a family SOFT).
    """
    organisms = set(attributes.get("!Sample_organism_ch1", ()))
    if organisms and "Homo sapiens" not in organisms:
        return f"the samples are {', '.join(sorted(organisms))}, not Homo sapiens"
    types = set(attributes.get("!Series_type", ()))
    if types and not any("expression" in t.lower() for t in types):
        if any(_NOT_EXPRESSION_TYPES.search(t) for t in types):
            return f"the series type is {', '.join(sorted(types))}"
    molecules = {m.lower() for m in attributes.get("!Sample_molecule_ch1", ())}
    if molecules and molecules <= {"genomic dna"}:
        return "the samples' molecule is genomic DNA"
    return None


def _soft_attributes(soft: SoftFile) -> dict[str, list[str]]:
    """A family SOFT's series attributes and its samples' attributes, merged by key."""
    attributes = {key: list(values) for key, values in soft.series.items()}
    for sample in soft.samples.values():
        for key, values in sample.items():
            attributes.setdefault(key, []).extend(values)
    return attributes


def _read_cohort(folder: Path) -> tuple[dict[int, list[str]], str, dict[str, list[str]]]:
    """A GEO cohort folder's characteristics rows, background text and series attributes,
    from its series matrix (or family SOFT).
    """
    if not folder.is_dir():
        raise GenotexError("is not a folder", path=folder)
    matrices = sorted(folder.glob("*_series_matrix.txt*"))
    softs = sorted(folder.glob("*_family.soft*"))
    if matrices:
        matrix = read_series_matrix(find_matrix(folder), expression=False)
        table, background = matrix.characteristics, matrix.background
        attributes = matrix.attributes
    elif softs:
        soft = read_soft(softs[0])
        table, background = soft.characteristics(), soft.background
        attributes = _soft_attributes(soft)
    else:
        raise GenotexError("holds no series matrix or family SOFT file", path=folder)
    return characteristics_dictionary(table, max_values=100_000), background, attributes


def cohort_record(cohort_dir: str | Path, trait: str) -> dict[str, Any]:
    """A GEO cohort folder as one record of `propose_records`' input (and of the benchmark's
    clinical-extraction records): `trait`, `cohort`, `background`, `characteristics`.

    Parameters
    ----------
    cohort_dir
        The cohort's folder (`input/GEO/<trait>/<GSE>`); its name is the cohort.
    trait
        The trait the record asks about.

    Returns
    -------
    dict
        JSON-ready: characteristics rows keyed by their number as text, each row's
        distinct values in order of frequency.
    """
    folder = Path(cohort_dir)
    characteristics, background, _ = _read_cohort(folder)
    rows = {str(row): list(values) for row, values in characteristics.items()}
    return {"trait": trait, "cohort": folder.name, "background": background,
            "characteristics": rows}  # fmt: skip


def propose_cohort(cohort_dir: str | Path, trait: str) -> CohortProposal:
    """Propose the recipe of a GEO cohort folder from its series matrix (or family SOFT)."""
    folder = Path(cohort_dir)
    characteristics, background, attributes = _read_cohort(folder)
    proposal = propose_recipe(characteristics, background, trait, cohort=folder.name)
    reason = _facts_verdict(attributes)
    if reason and proposal.gene_available:
        proposal = replace(
            proposal, gene_available=False, gene_confidence=0.95, gene_evidence=(reason,)
        )
    return CohortProposal(proposal, characteristics)


def _commented_table(confidence: float, evidence: Iterable[str]) -> tomlkit.items.Table:
    """A TOML table opening with the confidence and the evidence, as wrapped comments."""
    table = tomlkit.table()
    table.add(tomlkit.comment(f"confidence {confidence:.2f}"))
    for line in evidence:
        for part in textwrap.wrap(line, 96, break_long_words=False, break_on_hyphens=False):
            table.add(tomlkit.comment(part))
    return table


def proposal_toml(proposal: Proposal, characteristics: dict[int, list[str]] | None = None) -> str:
    """The proposal as a TOML recipe (what `Recipe.read` reads), its evidence as comments."""
    recipe = proposal.recipe()
    data = recipe.to_dict()
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"{PROPOSED_MARK[2:]} {__version__}: review it before you trust it"))
    doc.add(tomlkit.comment("delete the line above to keep this recipe as hand-written"))
    for key in ("trait", "cohort", "note"):
        doc.add(key, data[key])
    doc.add(tomlkit.nl())
    gene = _commented_table(proposal.gene_confidence, proposal.gene_evidence)
    gene.add("usable", data["gene"]["usable"])
    doc.add("gene", gene)
    doc.add("input", data["input"])
    variables = tomlkit.table(is_super_table=True)
    for name, spec in data["variables"].items():
        choice = proposal.choices["trait" if name == "trait" else name.capitalize()]
        table = _commented_table(choice.confidence, choice.evidence)
        for key, value in spec.items():
            if not spec["available"] and key != "available":
                continue
            if key == "rules":
                rules = tomlkit.array()
                rules.multiline(True)
                for rule in value:
                    item = tomlkit.inline_table()
                    item.update(rule)
                    rules.append(item)
                table.add(key, rules)
            elif key != "note":
                table.add(key, value)
        variables.add(name, table)
    doc.add("variables", variables)
    if characteristics:
        doc.add(tomlkit.nl())
        doc.add(tomlkit.comment("characteristics rows (row: distinct values, most frequent first)"))
        for row, values in characteristics.items():
            shown = ", ".join(values[:6]) + (
                f", ... ({len(values)} values)" if len(values) > 6 else ""
            )
            doc.add(tomlkit.comment(f"  {row}: {shown}"[:300]))
    return tomlkit.dumps(doc)


@dataclass(frozen=True)
class RecordsSummary:
    """How many records were answered, and which could not be read (line: reason)."""

    written: int
    errors: dict[int, str]


def _record_input(line: str) -> tuple[dict[str, Any], str | None]:
    """The fields of one input line, or the reason it cannot be used."""
    try:
        record = parse_json(line)
    except GenotexError as exc:
        return {}, f"the line is not usable JSON: {exc.reason}"
    if not isinstance(record, dict):
        return {}, "the line is not a JSON object"
    problems = [k for k in ("trait", "cohort", "background") if not isinstance(record.get(k), str)]
    characteristics = record.get("characteristics")
    if not isinstance(characteristics, dict) or not all(
        isinstance(v, list) and (str(k).isascii() and str(k).isdigit())
        for k, v in characteristics.items()
    ):
        problems.append("characteristics")
    if problems:
        return record, f"missing or malformed field(s): {', '.join(problems)}"
    return record, None


def _failed(record: dict[str, Any], reason: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: record.get(k) if isinstance(record.get(k), str) else None for k in ("trait", "cohort")
    }
    out.update({k: None for k in _RECORD_KEYS[2:]})
    out.update(trait_map=None, age_map=None, gender_map=None, confidence=None, error=reason)
    return out


#: The largest records file read (the development split's is under 10 MB).
MAX_RECORDS_BYTES = 512 * 1024 * 1024


def propose_records(in_path: str | Path, out_path: str | Path) -> RecordsSummary:
    """One proposal line per input line (`trait`, `cohort`, `background`, `characteristics`).

    A line that cannot be read or answered gets nulls and an `error`; the
    output is written atomically, in input order (blank lines are skipped).
    """
    in_path, out_path = Path(in_path), Path(out_path)
    data = read_regular_bytes(in_path, MAX_RECORDS_BYTES, error=GenotexError)  # no FIFO, bounded
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise GenotexError("is not UTF-8 text (a JSONL file of records)", path=in_path) from None
    lines, errors = [], {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record, reason = _record_input(line)
        if reason is None:
            try:
                rows = {int(k): v for k, v in record["characteristics"].items()}
                answer = propose_recipe(
                    rows, record["background"], record["trait"], cohort=record["cohort"]
                ).record()
            except (ValueError, TypeError, RecursionError) as exc:
                reason = f"the record cannot be proposed for ({exc.__class__.__name__}: {exc})"
        if reason is not None:
            errors[number] = reason
            answer = _failed(record, reason)
        lines.append(json_line(answer))
    write_text_atomic(out_path, "".join(line + "\n" for line in lines))
    return RecordsSummary(len(lines), errors)
