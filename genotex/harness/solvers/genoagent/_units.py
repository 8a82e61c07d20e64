"""GenoAgent's action units and prompts: data files of the package, read here and only here.

`units.toml` lists the named steps of each workflow (a GEO cohort, the TCGA cohort, the
Statistician's problems) with who writes them and their instruction; `prompts/`
holds each role's instructions and the message templates.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Literal

__all__ = ["ROLES", "Unit", "prompt", "units"]

#: The model roles of the team (Inspect's `--model-role`), each may be its own model.
ROLES = ("data_engineer", "statistician", "code_reviewer", "domain_expert", "planner")
Workflow = Literal["geo", "tcga", "statistics"]


@dataclass(frozen=True)
class Unit:
    """One action unit: its name, who writes it (`data_engineer`, `statistician` or
    `expert`, a step that needs domain knowledge) and its instruction.
    """

    name: str
    writer: str
    instruction: str

    @property
    def expert(self) -> bool:
        return self.writer == "expert"


@functools.cache
def units(workflow: Workflow, library: str = "paper") -> tuple[Unit, ...]:
    """The action units of a workflow written for a library (`paper` or `genotex`), in order."""
    name = "units_paper.toml" if library == "paper" else "units.toml"
    text = resources.files("genotex.harness.solvers.genoagent").joinpath(name).read_text()
    found = tomllib.loads(text)[workflow]
    return tuple(Unit(u["name"], u["writer"], u["instruction"].strip()) for u in found)


@functools.cache
def prompt(name: str) -> str:
    """The text of `prompts/<name>.md`."""
    folder = resources.files("genotex.harness.solvers.genoagent").joinpath("prompts")
    return folder.joinpath(f"{name}.md").read_text().strip()
