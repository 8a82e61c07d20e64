"""The kernel preamble of a GenoAgent workflow over this library: the usual modules, then
exactly the library's public names, and genotex's own pipelines refused to the steps.
"""

__all__ = ["KERNEL_MODULES", "kernel_preamble"]

#: The names besides the library's that a kernel starts with: what any analyst imports first.
KERNEL_MODULES = ("json", "os", "re", "Path", "np", "pd")


def kernel_preamble(*, allow_lmm: bool = True) -> str:
    """Python source that fills a fresh kernel's namespace with `KERNEL_MODULES` and the
    library's `__all__`; `allow_lmm=False` (No BEC) makes the library refuse the LMM.
    """
    lines = [
        "import json, os, re",
        "from pathlib import Path",
        "import numpy as np",
        "import pandas as pd",
        "from genotex.agentlib import *",
        f"import genotex.agentlib._settings as _s; _s.allow_lmm({bool(allow_lmm)}); del _s",
        # genotex's own pipelines refused to the steps (`_guard`): the row measures the model
        "import genotex.agentlib._guard as _g; _g.guard_pipelines(); del _g",
    ]
    return "\n".join(lines) + "\n"
