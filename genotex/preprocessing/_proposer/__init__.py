"""The recipe proposer: what an analyst decides before preprocessing a GEO cohort, proposed.

From a cohort's characteristics rows and background text, `propose_recipe`
decides whether the series holds gene expression, which row holds the trait,
Age and Gender (or none), and what number each value becomes, each decision
with a confidence and its evidence. `propose_cohort` does it for a series
folder and `propose_records` for a file of clinical records.

Modules: `_vocabulary` (the trait's words and abbreviations, value
vocabularies), `_rules` (rule scores and value maps of a row), `_features`
(the ranker's features, by name), `_ranker` (the trait-row ranker and its
shipped weights), `_propose` (the decisions), `_io` (cohort folders, TOML
recipes, record files). `_training` fits the ranker's weights; it is used
by `scripts/score_proposer.py` and not re-exported.
"""

from ._features import RECORD_FEATURES, ROW_FEATURES, Feature, feature_index
from ._io import (
    PROPOSED_MARK,
    CohortProposal,
    RecordsSummary,
    cohort_record,
    is_proposed,
    proposal_toml,
    propose_cohort,
    propose_records,
)
from ._propose import Choice, Proposal, gene_availability, propose_recipe
from ._ranker import TraitRanker
from ._vocabulary import TraitTerms, trait_terms

__all__ = [
    "PROPOSED_MARK",
    "RECORD_FEATURES",
    "ROW_FEATURES",
    "Choice",
    "CohortProposal",
    "Feature",
    "Proposal",
    "RecordsSummary",
    "TraitRanker",
    "TraitTerms",
    "feature_index",
    "gene_availability",
    "is_proposed",
    "proposal_toml",
    "cohort_record",
    "propose_cohort",
    "propose_records",
    "propose_recipe",
    "trait_terms",
]
