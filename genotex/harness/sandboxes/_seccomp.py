"""No new user namespace inside a sandbox: a seccomp filter for bwrap, a profile for podman.

An agent that may make a user namespace gets every capability inside it, and with them
the kernel's less-travelled code (mounts, netfilter, keyrings) to attack. Under bwrap
as a user, `--disable-userns` forbids it; as root the agent runs in no user namespace
of bwrap's, so the same is said to the kernel by a seccomp filter: `unshare` and
`clone` with `CLONE_NEWUSER` fail with EPERM, and `clone3` (whose flags a filter
cannot read) fails with ENOSYS, so that the C library falls back to `clone`, as
Flatpak and Docker do. `podman_profile` adds the same rules to Podman's default
profile.

`filter_program` is the classic BPF program bwrap's `--seccomp FD` loads, written out
here: 12 instructions over `struct seccomp_data` (no libseccomp on the host needed).
"""

from __future__ import annotations

import contextlib
import errno
import json
import platform
import struct
from pathlib import Path

__all__ = ["CLONE_NEWUSER", "filter_program", "podman_profile"]

CLONE_NEWUSER = 0x10000000
#: Per architecture: its audit number and the numbers of clone, unshare and clone3.
_ARCHES = {
    "x86_64": (0xC000003E, {"clone": 56, "unshare": 272, "clone3": 435}),
    "aarch64": (0xC00000B7, {"clone": 220, "unshare": 97, "clone3": 435}),
}
#: x86_64's x32 calls carry this bit in their number: refused whole.
_X32_BIT = 0x40000000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
#: Offsets in `struct seccomp_data`: nr, arch, and the low word of args[0] (little-endian).
_NR, _ARCH, _ARG0 = 0, 4, 16
#: Where Podman's default seccomp profile lies (containers-common).
PODMAN_DEFAULT = ("/usr/share/containers/seccomp.json", "/etc/containers/seccomp.json")


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes:
    """The BPF program that refuses new user namespaces on `machine` (this one by default).

    Layout (a jump counts from the next instruction, forward only)::

        0 ld arch              1 jeq ARCH ? 2 : eperm (another ABI: refused whole)
        2 ld nr                3 jge X32 ? eperm : 4
        4 jeq clone3 ? enosys : 5
        5 jeq unshare ? check : 6          6 jeq clone ? check : allow
        7 check: ld args[0]    8 jset NEWUSER ? eperm : allow
        9 allow                10 eperm    11 enosys
    """
    arch = machine or platform.machine()
    if arch not in _ARCHES:
        raise ValueError(f"no seccomp filter is written for {arch}")
    audit, numbers = _ARCHES[arch]
    check, allow, eperm, enosys = 7, 9, 10, 11
    program = [
        _op(_LD_W_ABS, _ARCH),  # 0
        _op(_JEQ, audit, 0, eperm - 2),  # 1
        _op(_LD_W_ABS, _NR),  # 2
        _op(_JGE, _X32_BIT if arch == "x86_64" else 0xFFFFFFFF, eperm - 4, 0),  # 3
        _op(_JEQ, numbers["clone3"], enosys - 5, 0),  # 4
        _op(_JEQ, numbers["unshare"], check - 6, 0),  # 5
        _op(_JEQ, numbers["clone"], check - 7, allow - 7),  # 6
        _op(_LD_W_ABS, _ARG0),  # 7
        _op(_JSET, CLONE_NEWUSER, eperm - 9, allow - 9),  # 8
        _op(_RET, _ALLOW),  # 9
        _op(_RET, _ERRNO | errno.EPERM),  # 10
        _op(_RET, _ERRNO | errno.ENOSYS),  # 11
    ]
    return b"".join(program)


def podman_profile(folder: Path) -> Path | None:
    """Podman's default seccomp profile with the same refusals, written into `folder`; None
    where no default profile is found (Podman's own default then applies, and says so).
    """
    for candidate in PODMAN_DEFAULT:
        with contextlib.suppress(OSError, ValueError):
            profile = json.loads(Path(candidate).read_text())
            break
    else:
        return None
    names = {"clone", "clone3", "unshare"}
    rules = []
    for rule in profile.get("syscalls", []):  # the three taken out of every rule naming them
        listed = rule.get("names", [rule.get("name")])
        kept = [n for n in listed if n not in names]
        if kept:
            rules.append({**{k: v for k, v in rule.items() if k != "name"}, "names": kept})
    without = {"index": 0, "value": CLONE_NEWUSER, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}
    with_it = {**without, "valueTwo": CLONE_NEWUSER}
    rules += [
        {"names": ["clone", "unshare"], "action": "SCMP_ACT_ALLOW", "args": [without]},
        {
            "names": ["clone", "unshare"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": errno.EPERM,
            "args": [with_it],
        },
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
    ]
    profile["syscalls"] = rules
    written = folder / "seccomp.json"
    written.write_text(json.dumps(profile))
    return written
