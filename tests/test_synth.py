"""The example generator is deterministic and writes the benchmark layout."""

import hashlib
import json

from genotex.core import load_task_info
from genotex.workflows import SynthSpec, write_example

SMALL = SynthSpec(n_traits=2, n_cohorts=4, samples=(8, 12), n_genes=30, n_related=5)


def _digest(root):
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes(tmp_path):
    a = write_example(tmp_path / "a", SMALL, seed=5)
    b = write_example(tmp_path / "b", SMALL, seed=5)
    c = write_example(tmp_path / "c", SMALL, seed=6)
    assert _digest(a.root) == _digest(b.root) != _digest(c.root)


def test_layout_of_a_generated_example(tmp_path):
    example = write_example(tmp_path, SMALL, seed=1)
    info = load_task_info(example.task_info)
    for trait in info.traits:
        records = json.loads(
            (example.ref_output / "preprocess" / trait / "cohort_info.json").read_text()
        )
        for cohort, record in records.items():
            assert record["is_available"] == (
                record["is_gene_available"] and record["is_trait_available"]
            )
            assert record["is_usable"] == (record["is_available"] and not record["is_biased"])
            linked = example.ref_output / "preprocess" / trait / f"{cohort}.csv"
            assert linked.exists() == record["is_usable"]
    assert any((example.ref_output / "regress").rglob("significant_genes_condition_None.json"))
