"""Where a sample's agent runs: the sandboxes, their limits, the kernel, the image.

`bwrap` (Bubblewrap on the host, the default where it works), `genotex-podman` (the
image built by `genotex harness image`), Inspect's `docker` and `local`; the choice among
them (`_choice`); each sample's limits and binds (`_sandbox_spec`), the unused host uid
and the seccomp filter an agent started as root runs under (`_uids`, `_seccomp`), the
cleanup of earlier runs' leftovers; GenoAgent's persistent Python kernel and its server,
and the in-sandbox MCP process. It imports genotex's core and nothing else of the
harness: the runs and the solvers use it, never the reverse.
"""

from ._bwrap import BubblewrapSandbox
from ._choice import choose_sandbox, inspect_sandbox
from ._image import build_image
from ._kernel import Kernel, StepRun
from ._podman import PodmanSandbox, default_image
from ._sandbox_spec import SampleSandbox, SandboxLimits

__all__ = [
    "BubblewrapSandbox",
    "Kernel",
    "PodmanSandbox",
    "SampleSandbox",
    "SandboxLimits",
    "StepRun",
    "build_image",
    "choose_sandbox",
    "default_image",
    "inspect_sandbox",
]
