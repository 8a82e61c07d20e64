"""Preprocessing: raw GEO and TCGA (Xena) files to the benchmark's CSVs and `cohort_info.json`.

`preprocess_cohort` handles one cohort (GEO with its recipe, TCGA
automatically); `preprocess_tree` every cohort of an input tree. Below them:
GEO readers (`read_series_matrix`, `read_soft`), probe mapping (`map_probes`),
symbol normalization (`load_synonyms`, `normalize_gene_table`), recipes
(`Recipe`, `clinical_table`), recipe proposals (`propose_recipe`,
`propose_cohort`, `propose_records`), the cohort's decision (`decide`,
`write_cohort`), `inspect_cohort` and the downloader.
"""

from ._clinical import apply_variable, clinical_table, convert_value, parse_number
from ._cohort import (
    CohortOutcome,
    cohort_paths,
    decide,
    handle_missing_values,
    is_biased,
    link,
    remove_cohort,
    write_cohort,
)
from ._cohort_files import find_matrix, find_platform
from ._download import (
    Download,
    DownloadResult,
    ManifestError,
    download_all,
    download_inputs,
    fetch,
    geo_downloads,
    load_manifest,
    plan_downloads,
    tcga_downloads,
)
from ._geo import GEOFormatError, SeriesMatrix, characteristics_dictionary, read_series_matrix
from ._inspect import inspect_cohort
from ._pipeline import (
    RecipeNeeded,
    TraitMismatch,
    geo_gene_table,
    is_tcga_folder,
    preprocess_cohort,
    preprocess_geo,
    preprocess_tcga,
)
from ._probes import (
    GeneColumnChoice,
    MappingError,
    choose_gene_column,
    entrez_to_symbol,
    explain_gene_column,
    extract_symbols,
    map_probes,
    probe_gene_pairs,
)
from ._proposal_io import (
    PROPOSED_MARK,
    CohortProposal,
    RecordsSummary,
    is_proposed,
    proposal_toml,
    propose_cohort,
    propose_records,
)
from ._proposer import Choice, Proposal, gene_availability, propose_recipe
from ._ranker import TraitRanker, labelled_example
from ._recipe import Recipe, RecipeError, Rule, Variable, load_recipe
from ._soft import SoftFile, read_soft, unique_names
from ._symbols import (
    MyGeneSynonyms,
    SynonymError,
    build_synonym_table,
    cached_synonym_table,
    gene_id_symbols,
    load_synonyms,
    normalize_gene_table,
    write_synonym_table,
)
from ._tcga import (
    XenaCohort,
    XenaError,
    clinical_features,
    find_xena_folder,
    read_xena,
    trait_from_barcode,
)
from ._tree import CohortJob, plan_layout, preprocess_tree, run_job, run_jobs
from ._vocabulary import TraitTerms, trait_terms

__all__ = [
    "CohortJob",
    "CohortOutcome",
    "Download",
    "GeneColumnChoice",
    "DownloadResult",
    "GEOFormatError",
    "ManifestError",
    "MappingError",
    "MyGeneSynonyms",
    "Recipe",
    "RecipeError",
    "RecipeNeeded",
    "Rule",
    "SeriesMatrix",
    "SoftFile",
    "SynonymError",
    "TraitMismatch",
    "Variable",
    "XenaCohort",
    "XenaError",
    "apply_variable",
    "build_synonym_table",
    "cached_synonym_table",
    "characteristics_dictionary",
    "choose_gene_column",
    "clinical_features",
    "clinical_table",
    "cohort_paths",
    "convert_value",
    "decide",
    "download_all",
    "download_inputs",
    "entrez_to_symbol",
    "explain_gene_column",
    "extract_symbols",
    "fetch",
    "find_matrix",
    "find_platform",
    "find_xena_folder",
    "gene_id_symbols",
    "geo_downloads",
    "geo_gene_table",
    "handle_missing_values",
    "inspect_cohort",
    "is_biased",
    "is_tcga_folder",
    "link",
    "load_manifest",
    "load_recipe",
    "load_synonyms",
    "map_probes",
    "normalize_gene_table",
    "parse_number",
    "plan_downloads",
    "plan_layout",
    "preprocess_cohort",
    "preprocess_geo",
    "preprocess_tcga",
    "preprocess_tree",
    "probe_gene_pairs",
    "PROPOSED_MARK",
    "TraitRanker",
    "labelled_example",
    "Choice",
    "CohortProposal",
    "Proposal",
    "RecordsSummary",
    "TraitTerms",
    "gene_availability",
    "is_proposed",
    "propose_cohort",
    "propose_records",
    "propose_recipe",
    "proposal_toml",
    "trait_terms",
    "read_series_matrix",
    "read_soft",
    "read_xena",
    "remove_cohort",
    "run_job",
    "run_jobs",
    "tcga_downloads",
    "trait_from_barcode",
    "unique_names",
    "write_cohort",
    "write_synonym_table",
]
