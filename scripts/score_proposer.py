#!/usr/bin/env python3
"""The recipe proposer on labelled clinical records: dev score, by-trait CV, speed.

    python scripts/score_proposer.py                       # ../shared/data/clinical/dev.jsonl
    python scripts/score_proposer.py --records R.jsonl --work DIR

1. Cross-validation by trait: for each trait, the trait-row ranker is fitted
   (the mean of 240 fits on traits drawn with replacement, `_proposer._training.fit_bagged`)
   on the other traits' records and that trait's records are proposed with
   it; the concatenated proposals are scored by the shared scorer
   (`tools/score_recipes.py GOLD PROPOSED`). This is the estimate on traits
   the proposer has not seen (its rules were written reading these records:
   only the weights are cross-validated).
2. Dev: the ranker fitted on every record (in-sample), scored the same way;
   `--write-weights` saves it as the package's shipped weights, with their
   provenance.
3. Speed: the records repeated to at least 1,000 proposed in one process
   (median of 3).
The per-trait CV scores are written to WORK/cv_per_trait.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from genotex import __version__  # noqa: E402
from genotex.core import file_sha256  # noqa: E402
from genotex.preprocessing import TraitRanker, propose_recipe  # noqa: E402
from genotex.preprocessing._proposer._training import fit_bagged, labelled_example  # noqa: E402

SHARED = Path(os.environ.get("GENOTEX_SHARED", Path(__file__).resolve().parents[2] / "shared"))
PENALTY = 1.0
BAGS = 240
SEED = 0
VARIABLES = ("trait", "age", "gender")
WEIGHTS = (
    Path(__file__).resolve().parents[1] / "genotex/preprocessing/_proposer/data/trait_ranker.json"
)


def propose(record: dict, ranker: TraitRanker | None) -> dict:
    rows = {int(k): v for k, v in record["characteristics"].items()}
    return propose_recipe(
        rows, record["background"], record["trait"], cohort=record["cohort"], ranker=ranker
    ).record()


def fit_ranker(examples: list, traits: list[str]) -> TraitRanker:
    """The shipped recipe: the mean of BAGS fits on traits drawn with replacement."""
    return fit_bagged(examples, traits, PENALTY, n_bags=BAGS, seed=SEED)


def cross_validate(records: list[dict]) -> list[dict]:
    """Each trait's records proposed by a ranker fitted on the other traits' records."""
    examples = [labelled_example(r) for r in records]
    out = {}
    for trait in sorted({r["trait"] for r in records}):
        ranker = fit_ranker(
            [e for e, r in zip(examples, records, strict=True) if r["trait"] != trait],
            [r["trait"] for r in records if r["trait"] != trait],
        )
        for i, record in enumerate(records):
            if record["trait"] == trait:
                out[i] = propose(record, ranker)
    return [out[i] for i in range(len(records))]


def run_scorer(gold: Path, proposed: Path, per_record: Path | None = None) -> str:
    command = [sys.executable, str(SHARED / "tools/score_recipes.py"), str(gold), str(proposed)]
    if per_record:
        command += ["--per-record", str(per_record)]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, default=SHARED / "data/clinical/dev.jsonl")
    parser.add_argument("--work", type=Path, default=Path("/tmp/genotex-proposer"))
    parser.add_argument(
        "--write-weights", action="store_true", help="save the ranker fitted on every record"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in args.records.read_text().splitlines() if line.strip()]

    cv = args.work / "cv_proposed.jsonl"
    write_jsonl(cv, cross_validate(records))
    per_record = args.work / "cv_per_record.csv"
    print("== cross-validated by trait ==\n" + run_scorer(args.records, cv, per_record))
    with open(per_record) as handle:
        rows = list(csv.DictReader(handle))
    per_trait = defaultdict(list)
    for row in rows:
        per_trait[row["trait"]].append(row)
    with open(args.work / "cv_per_trait.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["trait", "n", *VARIABLES])
        for trait, group in sorted(per_trait.items()):
            means = [statistics.mean(float(r[f"{v}_score"]) for r in group) for v in VARIABLES]
            writer.writerow([trait, len(group), *(f"{m:.2f}" for m in means)])
    print(f"per-trait CV scores: {args.work / 'cv_per_trait.csv'}")

    ranker = fit_ranker([labelled_example(r) for r in records], [r["trait"] for r in records])
    dev = args.work / "dev_proposed.jsonl"
    write_jsonl(dev, [propose(r, ranker) for r in records])
    print("== dev (fitted on every record: in-sample) ==\n" + run_scorer(args.records, dev))
    if args.write_weights:
        provenance = {
            "records": args.records.name,
            "records_sha256": file_sha256(args.records),
            "n_records": len(records),
            "n_traits": len({r["trait"] for r in records}),
            "penalty": PENALTY,
            "bags": BAGS,
            "seed": SEED,
            "genotex": __version__,
            "script": "scripts/score_proposer.py --write-weights",
        }
        TraitRanker(ranker.row_weights, ranker.none_weights, provenance).write(WEIGHTS)
        print(f"shipped weights written to {WEIGHTS}")

    many = (records * (1000 // len(records) + 1))[: max(1000, len(records))]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        for record in many:
            propose(record, None)
        times.append(time.perf_counter() - started)
    print(f"speed: {len(many)} records in {statistics.median(times):.2f} s (median of 3)")


if __name__ == "__main__":
    main()
