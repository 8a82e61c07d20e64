"""GenoAgent, the paper's team of agents, as the Inspect solver `genotex/genoagent`.

- `_units.py` and `units.toml`: the action units (named steps) of each workflow;
  `prompts/`: each role's instructions and the message templates; `_library.py`: the
  kernel's library and its documentation; `_time.py`: the budget per model; `_replay.py`:
  a run again from its log.
- `_team.py`: one workflow's steps: planned, written, run in the kernel, reviewed.
- `_solver.py`: the Project Manager (cohorts, then problems) and the solver.
"""

from ._replay import ReplayResult, replay_run
from ._replies import Verdict, code_of, plan_choice, verdict_of
from ._solver import STORE_KEY, genoagent
from ._team import Team, TeamOptions, WorkflowRecord
from ._units import ROLES, Unit, units

__all__ = [
    "ROLES",
    "STORE_KEY",
    "ReplayResult",
    "Team",
    "TeamOptions",
    "Unit",
    "Verdict",
    "WorkflowRecord",
    "code_of",
    "genoagent",
    "plan_choice",
    "replay_run",
    "units",
    "verdict_of",
]
