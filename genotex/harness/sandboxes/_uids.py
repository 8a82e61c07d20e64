"""The host uids a sandbox started as root gives its agents: an unused range, no account.

As root, bwrap's agent and podman's container uids are mapped onto one range of host uids
that no account, group or subordinate range uses (`GENOTEX_SANDBOX_UID`, documented in
the agents guide): the agent is uid `base + AGENT_UID` on the host, never 0.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = [
    "AGENT_UID",
    "DEFAULT_UID_BASE",
    "UID_RANGE",
    "host_agent_uid",
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
    if not text.isdigit() or len(text) > 10 or not 65536 <= int(text) <= 2**32 - 2 - UID_RANGE:
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
                if first.isdigit() and count.isdigit():
                    if int(first) < end and base < int(first) + int(count):
                        return (
                            f"the sandboxes' host uids {base:,}..{end - 1:,} overlap {name}'s "
                            f"subordinate range in {listing}; set GENOTEX_SANDBOX_UID elsewhere"
                        )
    return None
