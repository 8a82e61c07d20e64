"""Reading the agents' replies: a step's code, the planner's choice, the reviewer's verdict.

Models answer in many shapes; each reader takes the shapes a model is asked for and the
common ones it drifts to (a corpus of them, each with its expected reading, is
`tests/data/replies.json`). A reply is untrusted text: every reader runs in time linear in
the reply (lines are scanned once; a JSON object is decoded from at most
`MAX_OBJECT_STARTS` opening braces), never raises, and reads at most `MAX_REPLY_CHARS`.

The rules:

- **code**: every fenced block marked `python` (or `py`, `python3`, `ipython`), joined in
  order with a blank line between (a model that splits a step into parts means all of
  them), each dedented (a block indented in a list); when none is marked, every block
  with no language, likewise. A fence left open runs to the end of the reply. But when
  the line just before a block (its last sentence) calls it final ("Final version:",
  "Corrected code:", "Revised step", "Final:"), a model that drafted first means that
  one alone: the last block so called is the step's code, and the drafts before it are
  not run.
- **verdict**: a JSON object's `verdict`, `decision` or `status` (approve, approved,
  accept, lgtm / reject, rejected, revise, fail...), or its boolean `approved`; else the
  last line labelled *verdict*, *decision*, *final decision*, *review* or *status*; else
  the last line that says it alone: a decisive word (`REJECT`, `Approved.`, `✅ Approve`),
  one followed by a remark after a stop (`APPROVED. Looks good.`, `Rejected: the row is
  wrong`), said in the first person (`I approve.`), a line's last sentence (`The step is
  correct and ran. Approve.`), or "it is approved" / "is rejected". A verdict that
  cannot be read is a rejection, its feedback saying so. A rejection's feedback is the
  object's `feedback` (or `comments`, `reason`, `suggestions`) as text, else the reply.
- **plan**: a JSON object's `step` (or `next_step`, `next`, `action`), else a line
  `step: name` or `next: name`, else the one allowed name the reply mentions; when
  finishing is allowed, a line `FINISH` (`FINISH: the cohort is done`) or `TASK
  COMPLETED` (the successor code's word) finishes.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Verdict", "code_blocks", "code_of", "json_object_of", "plan_choice", "verdict_of"]

#: The characters of a reply that are read (a longer one is read up to here).
MAX_REPLY_CHARS = 400_000
#: How many opening braces a JSON object is tried from (each try is linear in the reply).
MAX_OBJECT_STARTS = 32
_PYTHON = ("python", "py", "python3", "ipython")
_APPROVE = ("approve", "approved", "approves", "accept", "accepted", "lgtm", "pass", "passed")
_REJECT = ("reject", "rejected", "rejects", "revise", "revision", "fail", "failed", "deny")
_LABELS = ("verdict", "decision", "final decision", "final verdict", "review", "status")
_MARKUP = "*_#>`'\" \t-:=.!"
#: Marks and emoji before a word (`✅ Approve`, `❌ Reject`).
_LEADING = re.compile(r"^[^\w]+")
#: A decisive word said alone on a line, or before a remark after a stop (`APPROVED. Looks
#: good.`), or in the first person (`I approve.`).
_SAID = re.compile(
    r"^(?:i|we)?\s*(?:(?:hereby|would|will)\s+)?(?P<word>not\s+approved?|approved?|approves|"
    r"accept(?:ed)?|lgtm|rejected|reject|rejects|revise|denied|deny)\s*(?:[.!:;,\u2014\u2013]|"
    r"-\s|$)",
    re.IGNORECASE,
)
#: "it is approved", "this step is rejected", "the code is not approved".
_IS_SAID = re.compile(r"\b(?:is|are)\s+(?P<word>(?:not\s+)?(?:approved|rejected))\b", re.I)
#: What ends a sentence inside a line.
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def _text(reply: object) -> str:
    return reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""


def _blocks(reply: object) -> Iterator[tuple[str, str, str]]:
    """Each fenced block of a reply as (language, body, the last prose line before it), in
    order, by one scan of its lines.
    """
    language: str | None = None
    fence, before = "", ""
    body: list[str] = []
    for line in _text(reply).splitlines():
        stripped = line.strip()
        if language is None:
            if stripped.startswith(("```", "~~~")):
                fence = stripped[:3]
                words = stripped[3:].strip("`~ \t").split()
                language, body = (words[0].lower() if words else ""), []
            elif stripped:
                before = stripped
            continue
        if stripped.startswith(fence) and not stripped.strip(fence[0]):
            yield language, "\n".join(body), before
            language, before = None, ""
            continue
        body.append(line)
    if language is not None:  # a fence left open runs to the end
        yield language, "\n".join(body), before


def code_blocks(reply: object) -> Iterator[tuple[str, str]]:
    """Each fenced block of a reply as (language, body), in order."""
    for language, body, _ in _blocks(reply):
        yield language, body


#: A line that calls the block after it the final one (a draft came before).
_FINAL = re.compile(
    r"^\W*(?:final|corrected|revised|updated|fixed)\b\W*(?:version|code|step|answer|"
    r"solution|implementation)?\W*(?:of the (?:code|step))?\W*$|^\W*final\b.{0,40}:\W*$",
    re.IGNORECASE,
)


def code_of(reply: object) -> str | None:
    """The step's code (the rule above), or None when the reply holds no such block."""
    blocks = list(_blocks(reply))
    for wanted in (_PYTHON, ("",)):
        chosen = [
            (textwrap.dedent(body).strip("\n"), before)
            for lang, body, before in blocks
            if lang in wanted and body.strip()
        ]
        finals = [c for c, before in chosen if _FINAL.match(_SENTENCES.split(before[:200])[-1])]
        if finals:  # drafts, then the one the model calls final: that one alone
            return finals[-1] + "\n"
        if chosen:
            return "\n\n".join(code for code, _ in chosen) + "\n"
    return None


def json_object_of(reply: object) -> dict | None:
    """The first JSON object of a reply: in a `json` block first, else from the first
    opening braces; nested objects and braces inside strings are read as JSON reads them.
    """
    text = _text(reply)
    decoder = json.JSONDecoder()
    places = [body for lang, body in code_blocks(text) if lang in ("json", "")] + [text]
    for place in places:
        start, tries = place.find("{"), 0
        while start >= 0 and tries < MAX_OBJECT_STARTS:
            tries += 1
            try:
                value, _ = decoder.raw_decode(place, start)
            except (ValueError, RecursionError):
                start = place.find("{", start + 1)
                continue
            if isinstance(value, dict):
                return value
            start = place.find("{", start + 1)
    return None


def _word(value: str) -> bool | None:
    """True for an approval, False for a rejection, None for neither (the first word of
    `value`, after any mark or emoji, with "not approved" and the like read as a rejection).
    """
    words = _LEADING.sub("", value).strip(_MARKUP).lower().replace("*", " ").split()
    if not words:
        return None
    first = words[0].strip(_MARKUP)
    if first in ("not", "no", "do", "don't") and len(words) > 1:
        return False if words[1].strip(_MARKUP).rstrip(",") in _APPROVE + ("not",) else None
    if first in _APPROVE or first.startswith("approv"):
        return True
    if first in _REJECT or first.startswith("reject"):
        return False
    if value.strip(_MARKUP).lower().startswith(("changes requested", "needs revision")):
        return False
    return None


def _line_verdict(text: str) -> bool | None:
    """The last labelled verdict line, else the last line that is a decisive word alone."""
    labelled: bool | None = None
    alone: bool | None = None
    for line in text.splitlines():
        cleaned = line.strip(_MARKUP).lower().replace("*", "")
        for label in _LABELS:
            if cleaned.startswith(label):
                rest = cleaned[len(label) :]
                if rest[:1] in (":", "-", "=", " ") or not rest:
                    said = _word(rest)
                    if said is not None:
                        labelled = said
                break
        else:
            said = _said_alone(line)
            if said is not None:
                alone = said
    return labelled if labelled is not None else alone


def _said_alone(line: str) -> bool | None:
    """The verdict a line says without a label (the rule above), or None."""
    cleaned = _LEADING.sub("", line.strip()).replace("*", "").strip()
    if len(cleaned.split()) <= 2 and (said := _word(cleaned)) is not None:
        return said
    for sentence in (cleaned, _SENTENCES.split(cleaned)[-1]):  # the line, its last sentence
        found = _SAID.match(_LEADING.sub("", sentence))
        if found is not None:
            return _word(found["word"])
    last = _SENTENCES.split(cleaned)[-1]
    found = _IS_SAID.search(last) if len(last.split()) <= 12 else None
    return _word(found["word"]) if found is not None else None


@dataclass(frozen=True)
class Verdict:
    """A review's verdict: approved, or rejected with feedback; `read` says whether the
    reply was understood (one that was not is a rejection).
    """

    approved: bool
    feedback: str
    read: bool = True


def _feedback(found: dict | None, text: str) -> str:
    for key in ("feedback", "comments", "reason", "suggestions", "issues"):
        value = (found or {}).get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value:
            return "\n".join(f"- {item}" for item in value if item is not None)
    return text.strip()


def verdict_of(reply: object) -> Verdict:
    """The reviewer's verdict (the rule above)."""
    text = _text(reply)
    found = json_object_of(text)
    said: bool | None = None
    if found is not None:
        for key in ("verdict", "decision", "final_decision", "status"):
            if isinstance(found.get(key), str):
                said = _word(found[key])
                if said is not None:
                    break
        for key in ("approved", "approve", "accept", "accepted"):
            if said is None and isinstance(found.get(key), bool):
                said = found[key]
    if said is None:
        said = _line_verdict(text)
    if said is None:
        why = "the review could not be read as approve or reject"
        return Verdict(False, f"({why}) {text.strip()}"[:8000], read=False)
    return Verdict(True, "") if said else Verdict(False, _feedback(found, text)[:8000])


_PLAN_LINE = re.compile(r"^\W*(?:next\s+step|step|next|action|choice)\W{0,3}[:=]\s*(\S+)", re.I)


#: The words a planner finishes with, alone on a line or before a remark (the successor
#: code's `TASK COMPLETED`, `FINISH:`).
_FINISHED = re.compile(r"^\W*(?:finish(?:ed)?|task\s+completed?)\b\W*(?::|$)", re.I)


def plan_choice(reply: object, allowed: Sequence[str]) -> str | None:
    """The step the planner chose, if it is one of `allowed` (the rule above); else None."""
    text = _text(reply)
    found = json_object_of(text)
    for key in ("step", "next_step", "next", "action"):
        named = (found or {}).get(key)
        if isinstance(named, str) and named.strip().strip("`'\"") in allowed:
            return named.strip().strip("`'\"")
    for line in text.splitlines():
        matched = _PLAN_LINE.match(line[:400])
        if matched:
            named = matched.group(1).strip("`'\".,*")
            if named in allowed:
                return named
    if "finish" in allowed and any(_FINISHED.match(line[:200]) for line in text.splitlines()):
        return "finish"
    words = set(re.findall(r"[A-Za-z0-9_]+", text))
    mentioned = [name for name in allowed if name in words]
    return mentioned[0] if len(mentioned) == 1 else None
