"""The agents genotex ships as Inspect solvers: gold and baseline (no model), the paper's
rows without a model (Lasso, LMM, Random), the zero-shot row, and GenoAgent (sub-package
`genoagent`, with its units, prompts and replay as data and code beside it).

Their arguments are checked before any sample runs (`_arguments`). It imports the runs
(the sample's problems and paths, the commands that answer them) and the sandboxes (the
kernel); nothing imports it but the entry point and the CLI.
"""

from typing import TYPE_CHECKING

from ...core import lazy_names

if TYPE_CHECKING:  # the names as the type checkers see them; imported lazily below
    from ._reference import baseline, gold
    from ._rows import lasso, lmm, random_row, zero_shot
    from .genoagent import ROLES, genoagent
    from .genoagent._replay import replay_run

#: Where each public name lives, imported when first used.
_LAZY = {
    "ROLES": ".genoagent",
    "baseline": "._reference",
    "genoagent": ".genoagent",
    "gold": "._reference",
    "lasso": "._rows",
    "lmm": "._rows",
    "random_row": "._rows",
    "replay_run": ".genoagent._replay",
    "zero_shot": "._rows",
}

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


#: Each public name imported when first used (PEP 562): importing one module of this room
#: (the MCP server's, in an image without Inspect) never imports the others.
__getattr__ = lazy_names(__name__, _LAZY)
