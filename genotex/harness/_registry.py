"""Inspect's entry point (`[project.entry-points.inspect_ai]`): genotex's tasks and agents."""

from .runs._scorer import genotex_scorer  # noqa: F401
from .runs._tasks import analysis, e2e, preprocess  # noqa: F401
from .sandboxes._bwrap import BubblewrapSandbox  # noqa: F401 - registers the `bwrap` sandbox
from .sandboxes._podman import PodmanSandbox  # noqa: F401 - registers the `genotex-podman` sandbox
from .solvers._placeholder_model import placeholder_model  # noqa: F401 - PROVIDER/MODEL refused
from .solvers._reference import baseline, gold  # noqa: F401
from .solvers._rows import lasso, lmm, random_row, zero_shot  # noqa: F401
from .solvers.genoagent import genoagent  # noqa: F401
