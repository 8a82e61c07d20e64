"""The `method` object of a regression result: what produced its numbers, one class per mode.

`genotex regress` writes it beside the genes (layout.md allows extra keys) so
that a result says how it was reached: the mode, the model, the solver and
its tolerance, the α grid and the rule that chose α, and the convergence
diagnostics. `ResultFile.method` reads it back as a `ReferenceMethod` or a
`StandardMethod`; the JSON keys and their order are those genotex 0.2 wrote.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

__all__ = [
    "MODES",
    "SELECT_BY",
    "AlphaGrid",
    "Method",
    "Mode",
    "ReferenceMethod",
    "SelectBy",
    "SolverFallback",
    "StandardMethod",
    "check_mode",
    "check_select_by",
    "method_from_dict",
]

#: "reference": the published pipeline, exactly; "standard": converged and sign-invariant.
Mode = Literal["reference", "standard"]
MODES: tuple[Mode, ...] = get_args(Mode)
#: The standard mode's α rule: least CV squared error, or the reference's CV selection precision.
SelectBy = Literal["prediction", "precision"]
SELECT_BY: tuple[SelectBy, ...] = get_args(SelectBy)


def check_mode(value: str) -> Mode:
    """`value` as a `Mode`; anything else is refused with the list of modes."""
    for mode in MODES:
        if value == mode:
            return mode
    raise ValueError(f"mode must be one of {', '.join(MODES)}, not {value!r}")


def check_select_by(value: str) -> SelectBy:
    """`value` as a `SelectBy` rule; anything else is refused with the list of rules."""
    for rule in SELECT_BY:
        if value == rule:
            return rule
    raise ValueError(f"select_by must be one of {', '.join(SELECT_BY)}, not {value!r}")


@dataclass(frozen=True)
class AlphaGrid:
    """The α values cross-validated, and how they were laid out."""

    rule: str
    values: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """`{"rule": …, "values": […]}`."""
        return {"rule": self.rule, "values": list(self.values)}


class _ModelNamed:
    """What both `method` classes share: the model's name, and its family."""

    model: str

    @property
    def model_family(self) -> str:
        """Either "Lasso" or "LMM"."""
        return self.model.split(" ", 1)[0]


@dataclass(frozen=True)
class ReferenceMethod(_ModelNamed):
    """How the reference mode (the published pipeline) reached a result.

    Parameters
    ----------
    model
        "Lasso", or "LMM (X rotated, y not)" with a batch effect.
    solver
        The solver and its settings, in words.
    alpha_grid
        The reference's absolute α grid.
    selection_rule
        How α was chosen, in words.
    alpha
        The α chosen.
    final_iterations, converged
        Coordinate-descent iterations of the final fit, and whether it converged:
        stopped before scikit-learn's cap with a relative duality gap within its
        tolerance, computed, not assumed.
    final_relative_gap
        That gap, over ‖y‖²/n (None in files written before 0.5).
    flags
        What makes the result fragile, kept as the published pipeline makes it:
        ``"alpha_at_grid_edge"`` (the chosen α is the grid's smallest or largest),
        ``"iteration_limit"`` (the final fit stopped at max_iter),
        ``"column_order_dependent"`` (the final fit on the genes in reverse order
        selects other genes: the Lasso's solution is not unique there),
        ``"alpha_fallback"`` (no α of the grid selected a known gene in the
        cross-validation, or none is known: α is the published fallback, 0.1).
    reversed_columns
        (genes selected with the columns reversed, genes in common), where that
        was checked: when the fit selects more genes than there are samples (a
        unique Lasso solution never does), is flagged otherwise, did not converge,
        is an LMM, or its cross-validated accuracy is at chance (`accuracy_at_chance`).
    """

    mode: ClassVar[Mode] = "reference"
    select_by: ClassVar[SelectBy] = "precision"
    #: scikit-learn's Lasso defaults, which the reference keeps.
    scikit_learn_tol: ClassVar[float] = 1e-4
    max_iter: ClassVar[int] = 1000

    model: str
    solver: str
    alpha_grid: AlphaGrid
    selection_rule: str
    alpha: float
    final_iterations: int
    converged: bool
    final_relative_gap: float | None = None
    flags: tuple[str, ...] = ()
    reversed_columns: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the order genotex writes them."""
        diagnostics: dict[str, Any] = {
            "final_iterations": self.final_iterations,
            "converged": self.converged,
        }
        if self.final_relative_gap is not None:
            diagnostics["final_relative_gap"] = self.final_relative_gap
        diagnostics["flags"] = list(self.flags)
        if self.reversed_columns is not None:
            selected, common = self.reversed_columns
            diagnostics["reversed_columns"] = {"selected": selected, "in_common": common}
        return {
            "mode": self.mode,
            "model": self.model,
            "solver": self.solver,
            "tolerance": {"scikit_learn_tol": self.scikit_learn_tol, "max_iter": self.max_iter},
            "alpha_grid": self.alpha_grid.to_dict(),
            "select_by": self.select_by,
            "selection_rule": self.selection_rule,
            "alpha": self.alpha,
            "diagnostics": diagnostics,
        }

    def warnings(self) -> list[str]:
        """Each flag in words, for a log line and eval's findings."""
        said = {
            "alpha_at_grid_edge": f"alpha {self.alpha:g} is at the edge of the grid",
            "iteration_limit": f"the final fit stopped at max_iter ({self.max_iter})",
            "alpha_fallback": (
                f"no alpha of the grid selected a known gene in the cross-validation (none "
                f"is known, or none was found): alpha is the published fallback {self.alpha:g}"
            ),
        }
        words = [said[flag] for flag in self.flags if flag in said]
        if "column_order_dependent" in self.flags and self.reversed_columns is not None:
            selected, common = self.reversed_columns
            words.append(
                f"the selection depends on the genes' column order (reversed, the fit "
                f"selects {selected} genes, {common} in common)"
            )
        return words


@dataclass(frozen=True)
class SolverFallback:
    """Which Lasso paths coordinate descent solved because the homotopy failed, and why."""

    solver: str
    paths: str  # "<k> of <n>"
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """`{"solver": …, "paths": …, "reasons": […]}`."""
        return {"solver": self.solver, "paths": self.paths, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class StandardMethod(_ModelNamed):
    """How the standard mode reached a result.

    Parameters
    ----------
    model
        "Lasso", or "LMM (X, y, 1 and Z rotated)" with a batch effect.
    solver
        The Lasso solver, in words.
    fallback
        The paths solved by coordinate descent instead (None: none were).
    tolerance
        The largest duality gap accepted, over ‖y‖²/n.
    alpha_grid
        The relative α grid.
    select_by, selection_rule
        The α rule asked for, and what it did, in words.
    alpha
        The α chosen.
    log_delta
        The LMM's log δ on the whole data (None without a batch effect).
    final_iterations, final_relative_gap, largest_cv_relative_gap, converged
        Steps of the final path, its relative duality gap, the largest gap of
        the CV fits, and whether both are within `tolerance`.
    """

    mode: ClassVar[Mode] = "standard"

    model: str
    solver: str
    fallback: SolverFallback | None
    tolerance: float
    alpha_grid: AlphaGrid
    select_by: SelectBy
    selection_rule: str
    alpha: float
    log_delta: float | None
    final_iterations: int
    final_relative_gap: float
    largest_cv_relative_gap: float
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the order genotex writes them."""
        return {
            "mode": self.mode,
            "model": self.model,
            "solver": self.solver,
            "fallback": None if self.fallback is None else self.fallback.to_dict(),
            "tolerance": {"duality_gap_over_mean_square_y": self.tolerance},
            "alpha_grid": self.alpha_grid.to_dict(),
            "select_by": self.select_by,
            "selection_rule": self.selection_rule,
            "alpha": self.alpha,
            "log_delta": self.log_delta,
            "diagnostics": {
                "final_iterations": self.final_iterations,
                "final_relative_gap": self.final_relative_gap,
                "largest_cv_relative_gap": self.largest_cv_relative_gap,
                "converged": self.converged,
            },
        }


Method = ReferenceMethod | StandardMethod


class _Shape(ValueError):
    """A `method` object that is not of either documented shape."""


def _get(node: object, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(node, Mapping) or key not in node:
        raise _Shape(f"no {key}")
    value: Any = node[key]
    numeric = kind in (float, int, (float, int))
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise _Shape(f"{key} is {value!r}")
    if numeric and isinstance(value, (int, float)) and not math.isfinite(value):
        raise _Shape(f"{key} is not finite")
    return value


def _grid(data: Mapping[str, Any]) -> AlphaGrid:
    grid = _get(data, "alpha_grid", dict)
    values = _get(grid, "values", list)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise _Shape("alpha_grid.values holds a non-number")
    return AlphaGrid(_get(grid, "rule", str), tuple(float(v) for v in values))


def _reference(data: Mapping[str, Any]) -> ReferenceMethod:
    diagnostics = _get(data, "diagnostics", dict)
    return ReferenceMethod(
        model=_get(data, "model", str),
        solver=_get(data, "solver", str),
        alpha_grid=_grid(data),
        selection_rule=_get(data, "selection_rule", str),
        alpha=float(_get(data, "alpha", (float, int))),
        final_iterations=_get(diagnostics, "final_iterations", int),
        converged=_get(diagnostics, "converged", bool),
        final_relative_gap=_optional_number(diagnostics, "final_relative_gap"),
        flags=_flags(diagnostics),
        reversed_columns=_reversed(diagnostics),
    )


#: The flags a reference-mode result may carry.
REFERENCE_FLAGS = (
    "alpha_at_grid_edge",
    "iteration_limit",
    "column_order_dependent",
    "alpha_fallback",
)


def _optional_number(node: Mapping[str, Any], key: str) -> float | None:
    return None if node.get(key) is None else float(_get(node, key, (float, int)))


def _flags(diagnostics: Mapping[str, Any]) -> tuple[str, ...]:
    flags = diagnostics.get("flags", [])
    if not isinstance(flags, list) or not all(f in REFERENCE_FLAGS for f in flags):
        raise _Shape("diagnostics.flags holds an unknown flag")
    return tuple(flags)


def _reversed(diagnostics: Mapping[str, Any]) -> tuple[int, int] | None:
    node = diagnostics.get("reversed_columns")
    if node is None:
        return None
    return _get(node, "selected", int), _get(node, "in_common", int)


def _fallback(node: object) -> SolverFallback | None:
    if node is None:
        return None
    reasons = _get(node, "reasons", list)
    if not all(isinstance(r, str) for r in reasons):
        raise _Shape("fallback.reasons holds a non-text")
    return SolverFallback(_get(node, "solver", str), _get(node, "paths", str), tuple(reasons))


def _standard(data: Mapping[str, Any]) -> StandardMethod:
    diagnostics = _get(data, "diagnostics", dict)
    log_delta = data.get("log_delta")
    return StandardMethod(
        model=_get(data, "model", str),
        solver=_get(data, "solver", str),
        fallback=_fallback(data.get("fallback")),
        tolerance=float(
            _get(_get(data, "tolerance", dict), "duality_gap_over_mean_square_y", (float, int))
        ),
        alpha_grid=_grid(data),
        select_by=check_select_by(_get(data, "select_by", str)),
        selection_rule=_get(data, "selection_rule", str),
        alpha=float(_get(data, "alpha", (float, int))),
        log_delta=None if log_delta is None else float(_get(data, "log_delta", (float, int))),
        final_iterations=_get(diagnostics, "final_iterations", int),
        final_relative_gap=float(_get(diagnostics, "final_relative_gap", (float, int))),
        largest_cv_relative_gap=float(_get(diagnostics, "largest_cv_relative_gap", (float, int))),
        converged=_get(diagnostics, "converged", bool),
    )


def method_from_dict(data: object) -> Method:
    """The typed `method` object of a parsed result.

    Raises
    ------
    ValueError
        When `data` is not a reference or standard `method` object, with what is wrong.
    """
    mode = _get(data, "mode", str)
    assert isinstance(data, Mapping)
    if mode == "reference":
        return _reference(data)
    if mode == "standard":
        return _standard(data)
    raise _Shape(f"mode is {mode!r}, not one of {', '.join(MODES)}")
