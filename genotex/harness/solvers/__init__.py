"""The agents genotex ships as Inspect solvers: gold and baseline (no model), the paper's
rows without a model (Lasso, LMM, Random), the zero-shot row, and GenoAgent (sub-package
`genoagent`, with its units, prompts and replay as data and code beside it).

Their arguments are checked before any sample runs (`_arguments`). It imports the runs
(the sample's problems and paths, the commands that answer them) and the sandboxes (the
kernel); nothing imports it but the entry point and the CLI.
"""

from ._reference import baseline, gold
from ._rows import lasso, lmm, random_row, zero_shot
from .genoagent import ROLES, genoagent, replay_run

__all__ = [
    "ROLES",
    "baseline",
    "genoagent",
    "gold",
    "lasso",
    "lmm",
    "random_row",
    "replay_run",
    "zero_shot",
]
