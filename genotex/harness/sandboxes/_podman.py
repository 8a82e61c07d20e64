"""`genotex-podman`: an Inspect sandbox that runs each sample's agent in a Podman container.

For those who have Podman. Each sample gets one container of genotex's image
(`genotex harness image` builds it offline), and each command the agent runs is
a `podman exec` in it:

- its working folder (`/home/agent`) and its `/tmp` are the sample's own host
  folders, bound read-write; its inputs are bound read-only at their paths
  inside it (never copied); the image's root file system is read-only; nothing
  of the host is mounted, and never the reference;
- no network (`--network none`: a loopback only), its own PID namespace, every
  capability dropped, no privilege gained by a set-uid file; an environment of
  only the image's and what the sandbox and the task set;
- limits: a pids cgroup, a memory cgroup, address space, CPU time and file size
  of each process, the size of its folders (as root a tmpfs), the command's wall
  time; a limit hit ends the sample with that limit as its failure reason
  (`SandboxLimitError`);
- before its output is read, every process the agent left running is killed;
  podman's init reaps orphans (`--init`);
- no new user namespace (Podman's seccomp profile with `unshare` and `clone` of
  `CLONE_NEWUSER` refused, `clone3` answered ENOSYS), no host proxy variable
  (`--http-proxy=false`).

Run as root, the agent runs as a uid of its own, leased for the sample from the
sandboxes' unused host range (`GENOTEX_SANDBOX_UID`): a host uid with no account, never 0,
and no other sample's. The container has no user namespace of its own (as bwrap started
by root has none): a user namespace made by root-run Podman is owned by root, and the
kernel charges its per-user counts (inotify instances, for one) to the owner, so that
every container's agent would share host root's, and one could exhaust them for the
host and every other sample; run
rootless, it is the container's root, which is the invoking user on the host (on a cgroups v2
host only: on v1, rootless podman ignores the pids and memory limits). Each
container is labelled with the run that made it, so that cleanup removes only
ended runs' containers.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess as sp
import time
import uuid
from pathlib import Path

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv, subprocess
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits

from ... import __version__
from ._cgroups import oom_kills, pids_limit_hits
from ._folder_sandbox import HOME, METADATA_KEY, HostFolderSandbox, MiB, sandbox_variables
from ._leftovers import run_alive, sweep_folders, this_run
from ._sandbox_spec import SampleSandbox, SandboxLimits, last_line, sandbox_uid_lease
from ._seccomp import podman_profile
from ._uids import AGENT_UID, uid_base, uid_problem

__all__ = [
    "AGENT_UID",
    "PodmanSandbox",
    "default_image",
    "podman_binary",
    "podman_problem",
    "run_alive",
    "this_run",
]

#: What marks genotex's containers (`inspect sandbox cleanup genotex-podman` removes them).
LABEL = "genotex.sandbox=1"
#: The label naming the run (its process) a container belongs to: `<pid>:<start time>`.
RUN_LABEL = "genotex.run"
#: Exit statuses of coreutils' timeout: the time ran out (TERM), or KILL was needed.
_TIMED_OUT = (124, 137)


def default_image() -> str:
    """The image `genotex harness image` builds for this version of genotex."""
    return f"localhost/genotex-sandbox:{__version__}"


def podman_binary() -> str | None:
    """The podman to run: `$GENOTEX_PODMAN`, or the PATH's."""
    return os.environ.get("GENOTEX_PODMAN") or shutil.which("podman")


def run_limits(limits: SandboxLimits, memory_bytes: int | None = None) -> list[str]:
    """`podman run`'s limits for a sample: cgroups, and every rlimit given explicitly (where
    the host refuses Podman's default rlimits, a container starts only with explicit ones).
    `memory_bytes` is the memory cgroup's bound (`memory_mb` unless said).
    """
    fsize, cpu = limits.file_mb * MiB, limits.cpu_seconds
    memory = memory_bytes if memory_bytes is not None else limits.memory_mb * MiB
    return [
        *("--pids-limit", str(limits.processes), "--memory", f"{memory // 1024}k"),
        *("--ulimit", "nofile=1024:1024", "--ulimit", "core=0:0"),
        *("--ulimit", f"nproc={limits.processes * 8}:{limits.processes * 8}"),
        *("--ulimit", f"cpu={cpu}:{cpu + 5}", "--ulimit", f"fsize={fsize}:{fsize}"),
    ]


@functools.cache
def podman_problem(image: str) -> str | None:
    """Why a sample cannot run in a podman container of `image` here, in one sentence, or None.

    Probed once per process and image (a container that runs `true` with a sample's limits).
    """
    binary = podman_binary()
    if binary is None:
        return "no podman found: apt-get install podman (or dnf install podman)"
    if os.geteuid() == 0 and (problem := uid_problem()) is not None:
        return problem
    if os.geteuid() != 0 and not Path("/sys/fs/cgroup/cgroup.controllers").is_file():
        return (
            "rootless podman cannot set a container's pids and memory limits on a cgroups v1 "
            "or hybrid host (it ignores them), so a sample's limits would not hold; run as "
            "root, or on a cgroups v2 host"
        )
    try:
        exists = sp.run([binary, "image", "exists", image], capture_output=True, timeout=60)
        if exists.returncode == 1:
            return f"no image {image}: build it with `genotex harness image`"
        probe = [binary, "run", "--rm", "--network", "none", *run_limits(SandboxLimits())]
        if os.geteuid() == 0:  # the launch a sample uses: an unused uid of the range
            agent = uid_base() + AGENT_UID
            probe += ["--user", f"{agent}:{agent}"]
        done = sp.run([*probe, image, "true"], capture_output=True, text=True, timeout=120)
    except (OSError, sp.SubprocessError) as exc:
        return f"{binary} cannot run ({exc})"
    if done.returncode != 0:
        detail = last_line(done.stderr)
        return (
            f"podman cannot start a container here ({detail}); where cgroups are v1 or hybrid, "
            'set runtime = "runc" and cgroup_manager = "cgroupfs" under [engine] in '
            "containers.conf (or a file named by CONTAINERS_CONF)"
        )
    return None


@sandboxenv(name="genotex-podman")
class PodmanSandbox(HostFolderSandbox):
    """One sample's container: the sample's host folders as `/home/agent` and `/tmp`."""

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        spec = SampleSandbox.from_metadata(metadata.get(METADATA_KEY))
        image = spec.image or default_image()
        problem = podman_problem(image)
        if problem is not None:
            raise RuntimeError(f"the podman sandbox cannot start: {problem}")
        sweep_folders()  # the sample folders of runs killed before their cleanup
        environment = cls(spec, image)
        try:
            await environment.start()
        except BaseException:
            await environment.teardown()
            raise
        return {"default": environment}

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:  # noqa: A002 - Inspect's signature
        """Remove the containers genotex left behind by runs that have ended (a run killed
        before its cleanup); a live run's containers are kept. With an id, that container.
        """
        binary = podman_binary() or "podman"
        if id:
            await subprocess([binary, "rm", "--force", "--time", "0", id])
            return
        listed = await subprocess(
            [
                binary,
                "ps",
                "--all",
                "--filter",
                f"label={LABEL}",
                "--format",
                f'{{{{.ID}}}}\t{{{{index .Labels "{RUN_LABEL}"}}}}',
            ]
        )
        ended = [
            name
            for name, _, run in (line.partition("\t") for line in listed.stdout.splitlines())
            if name.strip() and not run_alive(run.strip())
        ]
        if ended:
            await subprocess([binary, "rm", "--force", "--time", "0", *ended])

    def __init__(self, spec: SampleSandbox, image: str) -> None:
        self.name = f"genotex-{uuid.uuid4().hex[:16]}"  # before the folder's watcher is made
        self.binary = podman_binary() or "podman"
        super().__init__(spec, kind="podman")
        self.image = image
        self.rootless = os.geteuid() != 0
        self.cgroups: list[Path] = []
        self.memory: Path | None = None
        self.keeper = 0
        #: as root, the sample's own uid of the range (the agent's uid inside the container is
        #: its offset there); rootless, the container's root, which is the user
        self.lease = None if self.rootless else sandbox_uid_lease()
        self.agent_uid = os.getuid() if self.lease is None else self.lease.host
        if self.lease is not None:  # the agent's mapped uid owns its folders; inputs stay root's
            self.owner = (self.agent_uid, self.agent_uid)
            for folder in (self.home, self.tmp):
                os.chown(folder, *self.owner)
        #: Podman's default seccomp profile, with new user namespaces refused
        self.seccomp = podman_profile(self.folder)

    def removal_command(self) -> list[str]:
        """The container goes before the folder when the run dies: it holds the folder's tmpfs
        in its own mount namespace, and its processes (a `podman exec` of the run's) with it.
        """
        return [self.binary, "rm", "--force", "--time", "0", self.name]

    def _run_argv(self) -> list[str]:
        for host in (str(self.folder), *self.spec.binds.values()):
            if ":" in host or "," in host:
                raise RuntimeError(f"the podman sandbox cannot bind {host}: a ':' or ',' in it")
        binds = [f"{self.home}:{HOME}:rw", f"{self.tmp}:/tmp:rw"]
        binds += [
            f"{host}:{HOME}/{relative}:ro" for relative, host in sorted(self.spec.binds.items())
        ]
        user = "0:0" if self.lease is None else f"{self.agent_uid}:{self.agent_uid}"
        return [
            *(self.binary, "run", "--detach", "--name", self.name, "--label", LABEL),
            *("--label", f"{RUN_LABEL}={this_run()}"),
            *("--hostname", "sandbox", "--network", "none", "--user", user, "--workdir", HOME),
            *("--read-only", "--read-only-tmpfs=false", "--cap-drop", "all"),
            *("--security-opt", "no-new-privileges", "--http-proxy=false", "--init"),
            # which uids hold keys, and how many (the host's, per uid): hidden, as under bwrap
            *("--security-opt", "mask=/proc/key-users:/proc/keys"),
            *self._isolation(),
            *run_limits(self.spec.limits, self.memory_bound()),
            *(arg for bind in binds for arg in ("--volume", bind)),
            *(self.image, "sleep", "infinity"),
        ]

    def _isolation(self) -> list[str]:
        """Podman's seccomp profile with new user namespaces and the keyrings refused (as root
        the agent's uid is the sample's own unused host uid, set by `--user`).
        """
        args = []
        if self.seccomp is not None:
            args += ["--security-opt", f"seccomp={self.seccomp}"]
        return args

    async def start(self) -> None:
        """Start the sample's container, and find its pids cgroup (for the limit's hits)."""
        started = await subprocess(self._run_argv(), timeout=300, cwd=self.folder)
        if not started.success:
            raise RuntimeError(f"podman could not start the sample's container: {started.stderr}")
        children = await subprocess(
            [self.binary, "exec", self.name, "cat", "/proc/1/task/1/children"], timeout=60
        )
        keeper = children.stdout.split()
        if (
            not children.success
            or len(keeper) != 1
            or not (keeper[0].isascii() and keeper[0].isdigit())
        ):
            raise RuntimeError(
                f"podman's init in the sample's container has not one child but {keeper}"
            )
        self.keeper = int(keeper[0])  # the `sleep infinity` that keeps the container up
        found = await subprocess([self.binary, "inspect", "--format", "{{.State.Pid}}", self.name])
        unified = Path("/sys/fs/cgroup/cgroup.controllers").is_file()
        with contextlib.suppress(OSError, ValueError):
            lines = Path(f"/proc/{int(found.stdout)}/cgroup").read_text().splitlines()
            for number, controllers, path in (line.split(":", 2) for line in lines):
                if "pids" in controllers.split(","):  # cgroup v1's pids hierarchy
                    self.cgroups.append(Path("/sys/fs/cgroup/pids" + path))
                elif "memory" in controllers.split(","):  # and its memory hierarchy
                    self.memory = Path("/sys/fs/cgroup/memory" + path)
                elif number == "0" and not controllers and unified:  # cgroup v2
                    self.cgroups.append(Path("/sys/fs/cgroup" + path))
                    self.memory = Path("/sys/fs/cgroup" + path)

    async def teardown(self) -> None:
        with contextlib.suppress(Exception):
            await subprocess([self.binary, "rm", "--force", "--time", "0", self.name], timeout=120)
        self.close()  # the container gone first: then the folder and the uid's lease

    def limit_hits(self) -> int:
        return pids_limit_hits(self.cgroups)

    def oom_kills(self) -> int:
        return oom_kills(self.memory)

    def counts_forks(self) -> bool:
        return bool(self.cgroups)

    async def quiesce(self) -> None:
        """Kill every process of the container but its first (`sleep infinity`): nothing the
        agent started runs on while its output is read.
        """
        # process 1 is podman's init and `keeper` the container's `sleep infinity` (found
        # before any command of the agent's ran): every other process but this shell is killed
        script = (
            "for i in 1 2 3 4 5; do for p in /proc/[0-9]*; do p=${p#/proc/}; "
            f'case "$p" in 1|{self.keeper}|$$) ;; *) kill -KILL "$p" 2>/dev/null;; esac; done; '
            "sleep 0.05; done; true"
        )
        await subprocess(
            [self.binary, "exec", self.name, "sh", "-c", script], timeout=60, cwd=self.folder
        )

    def _exec_argv(
        self, cwd: str | None, env: dict[str, str] | None, *, interactive: bool
    ) -> list[str]:
        """`podman exec` into the sample's container, with its environment and address-space
        bound, up to the command.
        """
        inside = cwd if cwd and cwd.startswith("/") else f"{HOME}/{cwd or ''}".rstrip("/")
        variables = sandbox_variables(self.spec, "/opt/genotex/bin", env)
        argv = [self.binary, "exec", "--workdir", inside]
        argv += ["--interactive"] if interactive else []
        for key, value in variables.items():
            argv += ["--env", f"{key}={value}"]
        kib = self.spec.limits.memory_mb * 1024  # each process's address space, as bwrap's
        return [*argv, self.name, "sh", "-c", 'ulimit -v "$1"; shift; exec "$@"', "sh", str(kib)]

    def process_argv(self, cmd: list[str]) -> list[str]:
        return [*self._exec_argv(None, None, interactive=True), *cmd]

    async def run_command(  # noqa: PLR0913, PLR0917 - exec's arguments, handed on
        self,
        cmd: list[str],
        input: str | bytes | None,
        cwd: str | None,
        env: dict[str, str] | None,
        timeout: int | None,
        concurrency: bool,
    ) -> ExecResult[str]:
        """`podman exec` into the sample's container, stopped on time inside it."""
        argv = self._exec_argv(cwd, env, interactive=input is not None)
        if timeout is not None:  # the command itself stops on time, not only podman's client
            argv += ["timeout", "--kill-after=5", str(timeout)]
        started = time.monotonic()
        result = await subprocess(  # in the sample's folder: conmon leaves an `oom` file there
            args=[*argv, *cmd],
            cwd=self.folder,
            input=input,
            timeout=None if timeout is None else timeout + 30,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            concurrency=concurrency,
        )
        if timeout is not None and result.returncode in _TIMED_OUT:
            if time.monotonic() - started >= timeout:
                raise TimeoutError(f"the command ran longer than {timeout} s")
        return result
