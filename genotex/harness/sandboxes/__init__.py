"""Where a sample's agent runs: the sandboxes, their limits, the kernel, the image.

`bwrap` (Bubblewrap on the host, the default where it works), `genotex-podman` (the
image built by `genotex harness image`), Inspect's `docker` and `local`; the choice among
them (`_choice`); each sample's limits and binds (`_sandbox_spec`), the unused host uid
and the seccomp filter an agent started as root runs under (`_uids`, `_seccomp`), the
cleanup of earlier runs' leftovers; GenoAgent's persistent Python kernel and its server,
and the in-sandbox MCP process. It imports genotex's core and nothing else of the
harness: the runs and the solvers use it, never the reverse.
"""

from typing import TYPE_CHECKING

from ...core import lazy_names

if TYPE_CHECKING:  # the names as the type checkers see them; imported lazily below
    from ._bwrap import BubblewrapSandbox
    from ._choice import SANDBOXES, choose_sandbox, inspect_sandbox, sandbox_problem
    from ._image import build_image
    from ._kernel import Kernel, StepRun
    from ._podman import PodmanSandbox, default_image
    from ._sandbox_spec import SampleSandbox, SandboxLimits

#: Where each public name lives, imported when first used.
_LAZY = {
    "SANDBOXES": "._choice",
    "sandbox_problem": "._choice",
    "BubblewrapSandbox": "._bwrap",
    "Kernel": "._kernel",
    "PodmanSandbox": "._podman",
    "SampleSandbox": "._sandbox_spec",
    "SandboxLimits": "._sandbox_spec",
    "StepRun": "._kernel",
    "build_image": "._image",
    "choose_sandbox": "._choice",
    "default_image": "._podman",
    "inspect_sandbox": "._choice",
}

__all__ = [
    "SANDBOXES",
    "sandbox_problem",
    "build_image",
    "choose_sandbox",
    "default_image",
    "inspect_sandbox",
    "BubblewrapSandbox",
    "Kernel",
    "PodmanSandbox",
    "SampleSandbox",
    "SandboxLimits",
    "StepRun",
]


#: Each public name imported when first used (PEP 562): importing one module of this room
#: (the MCP server's, in an image without Inspect) never imports the others.
__getattr__ = lazy_names(__name__, _LAZY)
