"""Error classes of a cohort's clinical data: its trait, Age and Gender rows against the reference.

A row with no value at all, or one value where the reference's vary, is a finding of its own
(`feature_all_missing`, `feature_constant`): the published CSC compares the values both
tables hold, so an all-missing Age scores 1.0 there, and the diagnosis says what it hides.

Every check compares values on the samples both tables hold (finite in both),
so a table that also drops samples is still diagnosed; dropped samples are a
class of their own. Thresholds are shares of those samples: a check fires
when at least 95% of them agree with the fault it names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ...core import LabelledTable
from ._model import DiagnosisFinding

__all__ = ["AGREE", "Pairs", "aligned_rows", "check_clinical", "correlation", "dropped_samples"]

#: The share of shared samples that must agree for two rows to be "the same".
AGREE = 0.95
#: Age ratios that name a unit: months, weeks, days (to within 8%).
_AGE_UNITS = {"months": 12.0, "weeks": 52.18, "days": 365.25}

Pairs = tuple[np.ndarray, np.ndarray, int]
Report = Callable[..., None]


def _row(table: LabelledTable, feature: str) -> dict[object, float] | None:
    """A feature's values by sample (rows are features or samples, as the table says)."""
    labels = table.features.tolist()
    if feature not in labels:
        return None
    values = table.block([feature], table.samples.tolist())[0]
    return dict(zip(table.samples.tolist(), values.tolist(), strict=True))


def aligned_rows(
    pred: LabelledTable, ref: LabelledTable, feature: str, ref_feature: str | None = None
) -> Pairs | None:
    """(pred values, ref values, shared samples) where both are finite; None if one lacks it."""
    mine, theirs = _row(pred, feature), _row(ref, ref_feature or feature)
    if mine is None or theirs is None:
        return None
    shared = [s for s in theirs if s in mine]
    a = np.array([mine[s] for s in shared], dtype=float)
    b = np.array([theirs[s] for s in shared], dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep], len(shared)


def _agreement(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.isclose(a, b, rtol=1e-6, atol=1e-6))) if len(a) else float("nan")


def _binary(values: np.ndarray) -> bool:
    return len(values) > 0 and set(np.unique(values).tolist()) <= {0.0, 1.0}


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r of two value arrays; NaN for fewer than 3 values or a constant one."""
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _other_row_match(
    a: np.ndarray, candidates: Mapping[str, np.ndarray]
) -> tuple[str, float] | None:
    """The first candidate row the values equal (either polarity for binary rows)."""
    for name, values in candidates.items():
        if len(values) != len(a) or len(a) < 3:
            continue
        r = correlation(a, values)
        if np.isfinite(r) and abs(r) >= AGREE:
            return name, r
    return None


def _check_trait(pairs: Pairs, report: Report, candidates: Mapping[str, np.ndarray]) -> None:
    a, b, _ = pairs
    if len(a) < 3:
        return
    shared = f"over {len(a)} shared samples"
    if len(np.unique(a)) == 1 and len(np.unique(b)) > 1:
        counts = ", ".join(f"{v:g}: {int(np.sum(b == v))}" for v in np.unique(b)[:4])
        report(
            "trait_constant",
            f"trait constant ({a[0]:g}) {shared}; the reference's has {counts}",
            value=float(a[0]),
            samples=len(a),
        )
        return
    agreement = _agreement(a, b)
    if agreement >= AGREE:
        return
    r = correlation(a, b)
    if _binary(a) and _binary(b) and _agreement(a, 1 - b) >= AGREE:
        report("trait_inverted", f"trait inverted, r = {r:.2f} {shared}", r=r, samples=len(a))
        return
    match = _other_row_match(a, candidates)
    if match is not None:
        name, r_other = match
        report(
            "trait_row_wrong",
            f"trait taken from the {name} row (r = {r_other:.2f} with it, "
            f"agreement {100 * agreement:.0f}% with the reference's trait, {shared})",
            r=r_other,
            agreement=agreement,
            samples=len(a),
        )
        return
    report(
        "trait_mismatch",
        f"trait agrees with the reference's on {100 * agreement:.0f}% of {len(a)} shared samples",
        agreement=agreement,
        samples=len(a),
    )


def _emptied(pred: LabelledTable, ref: LabelledTable, feature: str, report: Report) -> bool:
    """`feature_all_missing` when the agent's row has no value on the samples both tables hold
    where the reference's has at least 3; True when so (nothing else can be checked of it).
    """
    mine, theirs = _row(pred, feature), _row(ref, feature)
    if mine is None or theirs is None:
        return False
    shared = [s for s in theirs if s in mine]
    known = sum(1 for s in shared if np.isfinite(theirs[s]))
    if known < 3 or any(np.isfinite(mine[s]) for s in shared):
        return False
    report(
        "feature_all_missing",
        f"{feature} has no value on the {len(shared)} shared samples, where the reference's "
        f"has {known}",
        samples=len(shared),
        reference_values=known,
    )
    return True


def _constant(feature: str, pairs: Pairs, report: Report) -> bool:
    """`feature_constant` when the agent's row is one value where the reference's vary."""
    a, b, _ = pairs
    if len(a) < 3 or len(np.unique(a)) != 1 or len(np.unique(b)) < 2:
        return False
    report(
        "feature_constant",
        f"{feature} is {a[0]:g} on all {len(a)} shared samples, where the reference's takes "
        f"{len(np.unique(b))} values",
        samples=len(a),
        distinct=len(np.unique(b)),
    )
    return True


def _check_age(pairs: Pairs, report: Report) -> None:
    a, b, _ = pairs
    if len(a) < 3 or _agreement(a, b) >= AGREE or _constant("Age", pairs, report):
        return
    if len(np.unique(a)) <= 2 < len(np.unique(b)):
        values = "/".join(f"{v:g}" for v in np.unique(a))
        report(
            "age_unit",
            f"Age binarised ({values}) over {len(a)} shared samples; the reference's is in years "
            f"({np.min(b):g}-{np.max(b):g})",
            distinct=len(np.unique(a)),
            samples=len(a),
        )
        return
    positive = b > 0
    if positive.sum() < 3:
        return
    ratio = float(np.median(a[positive] / b[positive]))
    for unit, factor in _AGE_UNITS.items():
        if abs(ratio / factor - 1) <= 0.08:
            report(
                "age_unit",
                f"Age in {unit}, not years: {ratio:.1f} times the reference's "
                f"over {len(a)} shared samples",
                ratio=ratio,
                samples=len(a),
            )
            return


def _check_gender(pairs: Pairs, report: Report) -> None:
    a, b, _ = pairs
    if _agreement(a, b) >= AGREE or _constant("Gender", pairs, report):
        return
    if len(a) >= 3 and _binary(a) and _binary(b) and _agreement(a, 1 - b) >= AGREE:
        r = correlation(a, b)
        report("gender_inverted", f"Gender inverted, r = {r:.2f} over {len(a)} shared samples",
               r=r, samples=len(a))  # fmt: skip


def dropped_samples(
    pred_samples: object, ref_samples: object, make: Callable[..., DiagnosisFinding], what: str = ""
) -> list[DiagnosisFinding]:
    """`samples_dropped` when at least 2% (and one) of the reference's samples are missing."""
    mine = set(np.asarray(pred_samples, dtype=object).tolist())
    theirs = [s for s in np.asarray(ref_samples, dtype=object).tolist() if s is not None]
    missing, total = sum(1 for s in theirs if s not in mine), len(theirs)
    if not missing or missing < max(1, 0.02 * total):
        return []
    message = f"{missing} of the reference's {total} {what}samples are missing"
    return [make("samples_dropped", message, missing=missing, samples=total)]


def check_clinical(
    pred: LabelledTable,
    ref: LabelledTable,
    trait: str,
    make: Callable[..., DiagnosisFinding],
    *,
    other_rows: Mapping[str, Mapping[object, float]] | None = None,
) -> list[DiagnosisFinding]:
    """The trait, Age, Gender and sample findings of a clinical_data table.

    `make(error_class, message, **numbers)` builds a finding at this file;
    `other_rows` are rows the trait may have been taken from instead (the raw
    characteristics rows, encoded), by sample.
    """
    found: list[DiagnosisFinding] = []

    def report(error_class: str, message: str, **numbers: float) -> None:
        found.append(make(error_class, message, **numbers))

    trait_pairs = aligned_rows(pred, ref, trait)
    if trait_pairs is not None and not _emptied(pred, ref, trait, report):
        _check_trait(trait_pairs, report, _candidates(pred, ref, trait, other_rows))
    for feature, check in (("Age", _check_age), ("Gender", _check_gender)):
        pairs = aligned_rows(pred, ref, feature)
        if pairs is not None and not _emptied(pred, ref, feature, report):
            check(pairs, report)
    return found + dropped_samples(pred.samples, ref.samples, make)


def _candidates(
    pred: LabelledTable,
    ref: LabelledTable,
    trait: str,
    other_rows: Mapping[str, Mapping[object, float]] | None,
) -> dict[str, np.ndarray]:
    """The rows the agent's trait may have been read from, on the samples its trait was compared."""
    mine = _row(pred, trait) or {}
    theirs = _row(ref, trait) or {}
    shared = [s for s in theirs if s in mine and np.isfinite(mine[s]) and np.isfinite(theirs[s])]
    rows: dict[str, Mapping[object, float]] = {}
    for feature in ("Gender", "Age"):
        found = _row(ref, feature)
        if found is not None:
            rows[f"reference's {feature}"] = found
    rows.update({f"characteristics {name!r}": row for name, row in (other_rows or {}).items()})
    out = {}
    for name, values_by_sample in rows.items():
        values = np.array([values_by_sample.get(s, np.nan) for s in shared], dtype=float)
        if np.isfinite(values).all():
            out[name] = values
    return out
