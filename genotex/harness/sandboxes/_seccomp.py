"""No new user namespace and no keyring inside a sandbox: a seccomp filter for bwrap, a
profile for podman.

An agent that may make a user namespace gets every capability inside it, and with them
the kernel's less-travelled code (mounts, netfilter, keyrings) to attack. Under bwrap
as a user, `--disable-userns` forbids it; as root the agent runs in no user namespace
of bwrap's, so the same is said to the kernel by a seccomp filter: `unshare` and
`clone` with `CLONE_NEWUSER` fail with EPERM, and `clone3` (whose flags a filter
cannot read) fails with ENOSYS, so that the C library falls back to `clone`, as
Flatpak and Docker do.

The kernel's keyrings are per session and per uid, not per namespace: a process that
may call `keyctl` reads the keys of the session it was started from (a login's
Kerberos or AFS tokens, a secret a cron job put there) and those its uid left in its
user keyring. `add_key`, `request_key` and `keyctl` fail with EPERM under bwrap (as
root and as a user), as under Docker's and Podman's default profiles; `podman_profile`
adds these rules and the user-namespace ones to Podman's default profile.

`filter_program` is the classic BPF program bwrap's `--seccomp FD` loads, written out
here over `struct seccomp_data` (no libseccomp on the host needed).
"""

from __future__ import annotations

import contextlib
import errno
import json
import platform
import struct
from pathlib import Path

__all__ = ["CLONE_NEWUSER", "KEYRING_CALLS", "filter_program", "podman_profile"]

CLONE_NEWUSER = 0x10000000
#: The system calls that reach the kernel's keyrings: refused whole.
KEYRING_CALLS = ("add_key", "request_key", "keyctl")
#: Per architecture: its audit number and the numbers of the calls the filter looks at.
_ARCHES = {
    "x86_64": (
        0xC000003E,
        {"clone": 56, "unshare": 272, "clone3": 435, "add_key": 248, "request_key": 249,
         "keyctl": 250},
    ),
    "aarch64": (
        0xC00000B7,
        {"clone": 220, "unshare": 97, "clone3": 435, "add_key": 217, "request_key": 218,
         "keyctl": 219},
    ),
}  # fmt: skip
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


#: One instruction: its label ("" for none), operation, operand, and the labels it jumps to
#: when true and when false ("" for the next instruction).
_Instruction = tuple[str, int, int, str, str]


def _assemble(program: list[_Instruction]) -> bytes:
    """The instructions made into BPF, whose jumps count forward from the next instruction."""
    labels = {label: i for i, (label, *_) in enumerate(program) if label}

    def jump(label: str, index: int) -> int:
        return labels[label] - index - 1 if label else 0

    return b"".join(
        _op(code, k, jump(true, i), jump(false, i))
        for i, (_, code, k, true, false) in enumerate(program)
    )


def filter_program(machine: str | None = None) -> bytes:
    """The BPF program that refuses new user namespaces and the keyrings on `machine` (this
    one by default).

    In order: another ABI (or x86_64's x32 calls) refused whole; `clone3` ENOSYS; the
    keyring calls EPERM; `unshare` and `clone` EPERM when their flags hold
    `CLONE_NEWUSER`; everything else allowed.
    """
    arch = machine or platform.machine()
    if arch not in _ARCHES:
        raise ValueError(f"no seccomp filter is written for {arch}")
    audit, numbers = _ARCHES[arch]
    x32 = _X32_BIT if arch == "x86_64" else 0xFFFFFFFF
    keyrings = [("", _JEQ, numbers[name], "eperm", "") for name in KEYRING_CALLS]
    return _assemble([
        ("", _LD_W_ABS, _ARCH, "", ""),
        ("", _JEQ, audit, "", "eperm"),
        ("", _LD_W_ABS, _NR, "", ""),
        ("", _JGE, x32, "eperm", ""),
        ("", _JEQ, numbers["clone3"], "enosys", ""),
        *keyrings,
        ("", _JEQ, numbers["unshare"], "flags", ""),
        ("", _JEQ, numbers["clone"], "flags", "allow"),
        ("flags", _LD_W_ABS, _ARG0, "", ""),
        ("", _JSET, CLONE_NEWUSER, "eperm", "allow"),
        ("allow", _RET, _ALLOW, "", ""),
        ("eperm", _RET, _ERRNO | errno.EPERM, "", ""),
        ("enosys", _RET, _ERRNO | errno.ENOSYS, "", ""),
    ])  # fmt: skip


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
    names = {"clone", "clone3", "unshare", *KEYRING_CALLS}
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
        {"names": list(KEYRING_CALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
    ]
    profile["syscalls"] = rules
    written = folder / "seccomp.json"
    written.write_text(json.dumps(profile))
    return written
