"""The host uids a sandbox started as root gives its agents: an unused range, no account,
and one uid per sample.

As root, bwrap's agent and podman's container uids are mapped onto one range of host uids
that no account, group or subordinate range uses (`GENOTEX_SANDBOX_UID`, documented in
the agents guide), never 0. Each sample leases a uid of its own from that range
(`lease_uid`): the kernel keeps state per uid whatever the namespaces (the user keyring,
the inotify instances and watches, RLIMIT_NPROC's count, the message-queue bytes), so two
samples of one uid could reach each other through it. A lease is an exclusive lock on a
file of `LEASES`, held while the sample lives and let go by the kernel when the run dies;
uids are handed out in turn, so a uid comes again only after the 64,535 others.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "AGENT_UID",
    "DEFAULT_UID_BASE",
    "UID_RANGE",
    "LEASES",
    "UidLease",
    "host_agent_uid",
    "lease_uid",
    "uid_base",
    "uid_problem",
]

#: The agent's uid and gid inside either sandbox (never 0).
AGENT_UID = 1000
#: The first host uid of the range a sandbox started as root gives its agents
#: (`GENOTEX_SANDBOX_UID`): uid `base + AGENT_UID` is the agent's, under bwrap as under podman.
DEFAULT_UID_BASE = 0x7000_0000
#: How many host uids the range holds (podman maps the container's 0..65535 onto it).
UID_RANGE = 65536


def uid_base() -> int:
    """The first host uid of the sandboxes' range (`$GENOTEX_SANDBOX_UID`, else the default);
    ValueError in one sentence when the variable is not a usable uid.
    """
    text = os.environ.get("GENOTEX_SANDBOX_UID", "").strip()
    if not text:
        return DEFAULT_UID_BASE
    if (
        not (text.isascii() and text.isdigit())
        or len(text) > 10
        or not 65536 <= int(text) <= 2**32 - 2 - UID_RANGE
    ):
        raise ValueError(
            f"GENOTEX_SANDBOX_UID must be a whole number from 65,536 to {2**32 - 2 - UID_RANGE:,} "
            f"(the first of {UID_RANGE:,} unused host uids), not {text[:20]!r}"
        )
    return int(text)


def host_agent_uid() -> int:
    """The host uid (and gid) of the agent's processes in a sandbox started as root."""
    return uid_base() + AGENT_UID


def uid_problem() -> str | None:
    """Why the sandboxes' uid range cannot be used here (a login account or group in it, or a
    subordinate range of /etc/subuid or /etc/subgid overlapping it), or None.
    """
    import grp
    import pwd

    try:
        base = uid_base()
    except ValueError as exc:
        return str(exc)
    end = base + UID_RANGE
    held = [("account", e.pw_name, e.pw_uid) for e in pwd.getpwall()]
    held += [("group", g.gr_name, g.gr_gid) for g in grp.getgrall()]
    for kind, name, number in held:
        if base <= number < end:
            return (
                f"the sandboxes' host ids {base:,}..{end - 1:,} hold the {kind} {name!r}; set "
                f"GENOTEX_SANDBOX_UID to the first of {UID_RANGE:,} unused ids"
            )
    for listing in ("/etc/subuid", "/etc/subgid"):
        with contextlib.suppress(OSError):
            for line in Path(listing).read_text().splitlines():
                name, _, rest = line.partition(":")
                first, _, count = rest.partition(":")
                if (first.isascii() and first.isdigit()) and (count.isascii() and count.isdigit()):
                    if int(first) < end and base < int(first) + int(count):
                        return (
                            f"the sandboxes' host uids {base:,}..{end - 1:,} overlap {name}'s "
                            f"subordinate range in {listing}; set GENOTEX_SANDBOX_UID elsewhere"
                        )
    return None


#: Where the leases' lock files are (root's own folder; as root only).
LEASES = Path("/run/genotex-sandbox-uids")


@dataclass
class UidLease:
    """One sample's uid: `offset` inside the range (`host` is the uid itself), held by the
    lock on its file until `release`.
    """

    offset: int
    handle: int | None = None

    @property
    def host(self) -> int:
        """The host uid (and gid) of the sample's agent."""
        return uid_base() + self.offset

    def release(self) -> None:
        if self.handle is not None:
            with contextlib.suppress(OSError):
                os.close(self.handle)
            self.handle = None


def _leases_folder() -> Path:
    """The lease folder, made root's and mode 700 when missing; OSError when it is there but
    not root's own folder (a link, another owner, open to others).
    """
    with contextlib.suppress(FileExistsError):
        LEASES.mkdir(mode=0o700)
    found = os.lstat(LEASES)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != 0 or found.st_mode & 0o077:
        raise OSError(f"{LEASES} is not root's own folder (mode 700)")
    return LEASES


def lease_uid() -> UidLease:
    """A uid of the range no live sample holds, the one after the last handed out (as root).

    OSError where no lease can be taken (the folder cannot be made, every uid is held).
    """
    folder = _leases_folder()
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    counter = os.open(folder / "next", flags, 0o600)
    try:
        fcntl.flock(counter, fcntl.LOCK_EX)  # one lease is chosen at a time, machine-wide
        text = os.pread(counter, 16, 0).decode("ascii", "replace").strip()
        start = int(text) if (text.isascii() and text.isdigit()) else 0
        span = UID_RANGE - AGENT_UID
        for step in range(span):
            offset = AGENT_UID + (start + step) % span
            handle = os.open(folder / str(offset), flags, 0o600)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(handle)
                continue
            os.ftruncate(counter, 0)
            os.pwrite(counter, str((offset - AGENT_UID + 1) % span).encode(), 0)
            return UidLease(offset, handle)
    finally:
        os.close(counter)
    raise OSError(f"every sandbox uid is held by a live sample ({span:,})")
