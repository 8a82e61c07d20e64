"""The function library a GenoAgent kernel starts with, and its documentation for the model.

`library=paper` (the default): `genotex.agentlib`, the paper's level, one transformation a
call; its documentation is generated here from the functions' signatures and docstrings, so
what the model reads is what the kernel holds. `library=genotex`: genotex's own high-level
library (a recipe proposer, a cohort or a problem in one call), an extra row that measures
how much a better library is worth; its documentation is a prompt file.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass

from ._units import prompt

__all__ = ["LIBRARIES", "Library", "library", "paper_documentation"]

#: The libraries a team can be given (`-S library=...`), the default first.
LIBRARIES = ("paper", "genotex")

#: genotex's high-level library: what its kernel imports.
_GENOTEX_IMPORTS = """\
import json, os
import numpy as np
import pandas as pd
from genotex.preprocessing import (
    Recipe, characteristics_dictionary, choose_gene_column, clinical_table, decide, find_matrix,
    find_platform, geo_gene_table, handle_missing_values, inspect_cohort, is_biased,
    load_synonyms, link, normalize_gene_table, preprocess_cohort, propose_cohort,
    read_series_matrix, write_cohort,
)
from genotex.regression import answer_problem, write_result
"""
#: Under No BEC, genotex's answer_problem refuses the LMM whichever model a step asks for.
_GENOTEX_NO_BEC = """\
_answer_problem = answer_problem
def answer_problem(*args, model="lasso", **kwargs):
    if str(model).lower() != "lasso":
        raise ValueError("batch-effect correction is off in this run (No BEC): the LMM and "
                         "the automatic choice are refused; answer with model='lasso'")
    return _answer_problem(*args, model=model, **kwargs)
"""
#: The sections of the generated documentation, by the library module a name comes from.
_SECTIONS = {
    "genotex.agentlib._geo": "A GEO cohort",
    "genotex.agentlib._tcga": "A TCGA (Xena) cohort",
    "genotex.agentlib._cohort": "A cohort's tables and its saved outputs",
    "genotex.agentlib._statistics": "Statistics",
    "genotex.agentlib._models": "Statistics",
}


def _signature(obj: object) -> str:
    """`(a: int, b: str = 'x') -> float`, annotations as written (not quoted)."""
    signature = inspect.signature(obj)  # type: ignore[arg-type]
    shown, keyword_only = [], False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and not keyword_only:
            shown.append("*")
            keyword_only = True
        text = parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}"
        shown.append(text)
    returns = signature.return_annotation
    return f"({', '.join(shown)})" + ("" if returns is signature.empty else f" -> {returns}")


def _entry(name: str) -> tuple[str, str]:
    """(section, text) of one library name: its signature, then its docstring."""
    import genotex.agentlib as agentlib

    obj = getattr(agentlib, name)
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
        fields = ", ".join(f"{f}: {t}" for f, t in inspect.get_annotations(obj).items())
        head = f"class {name}({fields})"
    elif inspect.isclass(obj):  # its constructor's arguments, or its docstring says them
        own = "__init__" in vars(obj) or obj.__init__.__module__.startswith("genotex.")
        arguments = _signature(obj.__init__).replace("(self, ", "(").replace("(self)", "()")
        arguments = arguments.removesuffix(" -> None")
        head = f"class {name}{arguments if own else '(...)'}"
    else:
        head = f"{name}{_signature(obj)}"
    doc = inspect.getdoc(obj) or ""
    return _SECTIONS[obj.__module__], f"- `{head}`\n" + "\n".join(
        f"  {line}".rstrip() for line in doc.splitlines()
    )


@functools.cache
def paper_documentation() -> str:
    """The paper library's documentation, generated from `genotex.agentlib.__all__`."""
    import genotex.agentlib as agentlib  # scikit-learn: loaded when a run first needs it

    sections: dict[str, list[str]] = {}
    for name in agentlib.__all__:
        section, text = _entry(name)
        sections.setdefault(section, []).append(text)
    modules = ", ".join(f"`{m}`" for m in agentlib.KERNEL_MODULES)
    parts = [f"# The function library, already imported in the kernel (with {modules})"]
    parts += [f"## {title}\n\n" + "\n".join(texts) for title, texts in sections.items()]
    return "\n\n".join(parts)


@dataclass(frozen=True)
class Library:
    """One library: the kernel's preamble for it and the documentation each role reads."""

    name: str

    def preamble(self, *, batch_effect_correction: bool) -> str:
        """What a fresh kernel runs first: the library's names, nothing else of genotex."""
        if self.name == "paper":
            from genotex.agentlib import kernel_preamble

            return kernel_preamble(allow_lmm=batch_effect_correction)
        return _GENOTEX_IMPORTS + ("" if batch_effect_correction else _GENOTEX_NO_BEC)

    def documentation(self, role: str) -> str:
        """The library as the role's system prompt shows it."""
        if self.name == "paper":
            return paper_documentation()
        return prompt("library_expert" if role == "domain_expert" else "library")


def library(name: str) -> Library:
    """The library called `name` (checked by the solver's arguments first)."""
    if name not in LIBRARIES:
        raise ValueError(f"library must be one of {', '.join(LIBRARIES)}, not {name!r}")
    return Library(name)
