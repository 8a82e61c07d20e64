"""A raw GEO or Xena folder as an AnnData in memory (#61): the same numbers `preprocess_cohort`
writes, nothing written, an unusable cohort refused in one sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from genotex.core import GenotexError
from genotex.preprocessing import (
    ProposedRecipeWarning,
    cohort_anndata,
    preprocess_cohort,
    raw_cohort_anndata,
)
from genotex.workflows import write_raw_benchmark

pytest.importorskip("anndata")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return write_raw_benchmark(tmp_path_factory.mktemp("raw"))


def _tree(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


@pytest.mark.parametrize(("trait", "cohort"), [("Asthma", "GSE100001"), ("Psoriasis", "Xena")])
def test_the_in_memory_cohort_is_what_preprocess_cohort_writes(bench, tmp_path, trait, cohort):
    root = bench.root
    folder = (root / "input/TCGA/TCGA_Psoriasis_(DEMO)" if cohort == "Xena"
              else root / "input/GEO" / trait / cohort)  # fmt: skip
    recipe = None if cohort == "Xena" else root / "recipes" / trait / f"{cohort}.json"
    synonyms = root / "metadata/gene_synonym.json"
    before = _tree(root)
    adata = raw_cohort_anndata(folder, trait, synonyms, recipe=recipe)
    assert _tree(root) == before  # nothing written
    preprocess_cohort(folder, trait, synonyms, tmp_path / "out", recipe=recipe)
    written = cohort_anndata(tmp_path / "out", trait, cohort)
    assert list(adata.obs_names) == list(written.obs_names)
    assert list(adata.var_names) == list(written.var_names)
    # the CSV holds the numbers as text; read back they are the in-memory ones
    np.testing.assert_allclose(adata.X, written.X, rtol=1e-12, atol=0)
    assert list(adata.obs.columns) == list(written.obs.columns)
    assert adata.uns["genotex"]["cohort_info"]["is_available"] is True
    assert adata.uns["genotex"]["cohort"] == cohort


def test_without_a_recipe_the_proposal_is_used_and_said(bench):
    folder = bench.root / "input/GEO/Asthma/GSE100001"
    with pytest.warns(ProposedRecipeWarning, match="review it"):
        adata = raw_cohort_anndata(folder, "Asthma", bench.root / "metadata/gene_synonym.json")
    assert adata.uns["genotex"]["recipe"]["trait"] == "Asthma"
    assert set(adata.obs["Asthma"].unique()) == {0.0, 1.0}


def test_an_unusable_cohort_and_a_missing_folder_are_one_sentence(bench, tmp_path):
    synonyms = bench.root / "metadata/gene_synonym.json"
    folder = bench.root / "input/GEO/Obesity/GSE100004"  # every sample a case
    with pytest.raises(GenotexError, match="is not usable for Obesity") as raised:
        raw_cohort_anndata(folder, "Obesity", synonyms,
                           recipe=bench.root / "recipes/Obesity/GSE100004.json")  # fmt: skip
    assert "\n" not in str(raised.value) and "GSE100004" in str(raised.value)
    with pytest.raises(GenotexError, match="does not exist"):
        raw_cohort_anndata(tmp_path / "nowhere", "Obesity", synonyms)
