"""Reading the agents' replies: a step's code, the planner's choice, the reviewer's verdict.

Models answer in many shapes; each reader takes the shapes a model is asked for and the
common ones it drifts to, and falls back to a stated default on anything else (never an
exception: a reply is untrusted text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Verdict", "code_of", "json_object_of", "plan_choice", "verdict_of"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def code_of(reply: str) -> str | None:
    """The step's code: the first fenced block marked python (or py), else the first fenced
    block with no language; None when the reply holds no such block.
    """
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(reply or "")]
    for wanted in (("python", "py", "python3"), ("",)):
        for lang, body in blocks:
            if lang in wanted and body.strip():
                return body.rstrip() + "\n"
    return None


def json_object_of(reply: str) -> dict | None:
    """The first flat JSON object of a reply (in a fence or not), else None."""
    for match in _OBJECT.finditer(reply or ""):
        try:
            value = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def plan_choice(reply: str, allowed: Sequence[str]) -> str | None:
    """The step the planner chose, if it is one of `allowed`: `{"step": name}`, else a line
    `step: name`, else the only allowed name the reply mentions. None: unreadable.
    """
    found = json_object_of(reply)
    named = found.get("step") if found else None
    if not isinstance(named, str):
        line = re.search(r"(?im)^\W*(?:next\s+)?step\W*[:=]\s*[\"'`]?([A-Za-z0-9_]+)", reply or "")
        named = line.group(1) if line else None
    if isinstance(named, str) and named.strip() in allowed:
        return named.strip()
    mentioned = [name for name in allowed if re.search(rf"\b{re.escape(name)}\b", reply or "")]
    return mentioned[0] if len(mentioned) == 1 else None


@dataclass(frozen=True)
class Verdict:
    """A review's verdict: approved, or rejected with feedback; `read` says whether the
    reply was understood (an unreadable one is decided by whether the step ran).
    """

    approved: bool
    feedback: str
    read: bool = True


def verdict_of(reply: str, ran: bool) -> Verdict:
    """The reviewer's verdict: `{"verdict": "approve" | "reject", "feedback": ...}`, else a
    line starting with approve(d) or reject(ed); else, unread, the step is approved when it
    ran without error and rejected (the reply as its feedback) when it did not.
    """
    text = reply or ""
    found = json_object_of(text)
    said = found.get("verdict", found.get("decision")) if found else None
    feedback = found.get("feedback", "") if found else ""
    if isinstance(said, str):
        word = said.strip().lower()
        if word.startswith("approve"):
            return Verdict(True, "")
        if word.startswith("reject"):
            return Verdict(False, str(feedback) or text.strip())
    line = re.search(r"(?im)^\W*(?:verdict\W*|final decision\W*)?(approved?|rejected?)\b", text)
    if line:
        approved = line.group(1).lower().startswith("approve")
        return Verdict(approved, "" if approved else text.strip())
    if ran:
        return Verdict(True, "", read=False)
    return Verdict(False, text.strip() or "The step failed; fix the error in its trace.", False)
