"""Training the trait-row ranker: a conditional logit fitted by penalized maximum likelihood.

Not part of the package's API: `scripts/score_proposer.py` runs it on
labelled clinical records, estimates the error on traits left out, and
writes the shipped weights (`data/trait_ranker.json`) with their provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._features import RECORD_FEATURES, ROW_FEATURES, option_features
from ._ranker import TraitRanker
from ._vocabulary import trait_terms

__all__ = ["fit_bagged", "fit_ranker", "labelled_example"]

#: An example: (row features, "no row" features, the labelled option: a row index into the
#: features, or len(features) for no row).
Example = tuple[np.ndarray, np.ndarray, int]


def labelled_example(record: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """A labelled clinical record (`dev.jsonl`'s schema) as a training example."""
    rows = {int(k): v for k, v in record["characteristics"].items()}
    terms = trait_terms(record["trait"], record["background"])
    taken = {int(r) for r in (record.get("age_row"), record.get("gender_row")) if r is not None}
    candidates, features, none = option_features(rows, record["background"], terms, taken)
    gold = record.get("trait_row")
    return features, none, candidates.index(gold) if gold in candidates else len(candidates)


class _Likelihood:
    """The penalized negative log-likelihood of the conditional logit and its gradient, over
    every example at once (rows stacked; a softmax per example over its rows and "no row").
    """

    def __init__(self, examples: Sequence[tuple[np.ndarray, np.ndarray, int]], penalty: float):
        n_row = len(ROW_FEATURES)
        sizes = np.array([len(f) for f, _, _ in examples], dtype=int)
        labels = np.array([label for _, _, label in examples], dtype=int)
        self.penalty = penalty
        self.rows = np.vstack(
            [f.reshape(-1, n_row) for f, _, _ in examples] or [np.zeros((0, n_row))]
        )
        self.owner = np.repeat(np.arange(len(examples)), sizes)
        self.none = np.array([n for _, n, _ in examples]).reshape(len(examples), -1)
        self.is_none = labels == sizes
        starts = np.cumsum(sizes) - sizes
        self.label_rows = (starts + labels)[~self.is_none]

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        n_row = len(ROW_FEATURES)
        row_scores = self.rows @ w[:n_row]
        none_scores = self.none @ w[n_row:]
        top = none_scores.copy()
        np.maximum.at(top, self.owner, row_scores)
        row_exp = np.exp(row_scores - top[self.owner])
        none_exp = np.exp(none_scores - top)
        total = np.bincount(self.owner, row_exp, minlength=len(top)) + none_exp
        loss = float(np.sum(top + np.log(total)))
        loss -= float(row_scores[self.label_rows].sum() + none_scores[self.is_none].sum())
        p_rows, p_none = row_exp / total[self.owner], none_exp / total
        grad = np.concatenate(
            [
                self.rows.T @ p_rows - self.rows[self.label_rows].sum(axis=0),
                self.none.T @ p_none - self.none[self.is_none].sum(axis=0),
            ]
        )
        return loss + self.penalty * float(w @ w), grad + 2 * self.penalty * w


def fit_ranker(examples: Sequence[Example], penalty: float = 1.0) -> TraitRanker:
    """Maximum likelihood with an L2 penalty; an example is (row features, none features,
    the labelled option: a row index into the features, or len(features) for no row).
    """
    from scipy.optimize import minimize

    loss = _Likelihood(examples, penalty)
    start = np.zeros(len(ROW_FEATURES) + len(RECORD_FEATURES))
    result = minimize(loss, start, jac=True, method="L-BFGS-B")
    n_row = len(ROW_FEATURES)
    return TraitRanker(
        result.x[:n_row], result.x[n_row:], {"penalty": penalty, "examples": len(examples)}
    )


def fit_bagged(
    examples: Sequence[Example],
    groups: Sequence[str],
    penalty: float = 1.0,
    n_bags: int = 240,
    seed: int = 0,
) -> TraitRanker:
    """The mean weights of `fit_ranker` over `n_bags` bootstrap samples of whole groups.

    Parameters
    ----------
    examples
        The labelled examples (`labelled_example`).
    groups
        Each example's group (its trait): resampling whole traits asks how the
        ranker does on a trait it has not seen.
    penalty
        The L2 penalty of each fit.
    n_bags, seed
        How many bootstrap fits are averaged, and the seed that draws them.

    Notes
    -----
    A single fit lets a few uncertain records decide many weights, so a row
    chosen with probability near one half flips with any change of the
    training records; the mean of many fits is stable. How the number of bags
    was chosen (the cross-validated score's spread over seeds) is in the
    proposer's documentation.
    """
    names = sorted(set(groups))
    members = {name: [i for i, g in enumerate(groups) if g == name] for name in names}
    rng = np.random.default_rng(seed)
    fits = []
    for _ in range(n_bags):
        drawn = rng.choice(len(names), size=len(names), replace=True)
        fits.append(fit_ranker([examples[i] for k in drawn for i in members[names[k]]], penalty))
    provenance = {"penalty": penalty, "examples": len(examples), "bags": n_bags, "seed": seed}
    return TraitRanker(
        np.mean([f.row_weights for f in fits], axis=0),
        np.mean([f.none_weights for f in fits], axis=0),
        provenance,
    )
