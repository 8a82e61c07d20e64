"""A stand-in for OpenAI's API on 127.0.0.1, for running the docs' `--model openai/...`
commands as printed (`OPENAI_BASE_URL` points Inspect's provider here; nothing leaves the
machine).

It answers the two endpoints Inspect's OpenAI provider calls: Chat Completions (gpt-4o) and
Responses (the o-series). Each answer is the reply a real model writes when it is done: a
call of the `submit` tool when the request offers one, else a short text (a zero-shot
answer: a JSON list of genes, `genes`). Usage is always reported, as OpenAI does.

Written from OpenAI's published API reference, not from a client's code.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from tests.conftest import local_server, send_json

#: what the model answers where it writes text (a zero-shot agent reads a gene list)
GENES = ["IL13", "IL4", "ORMDL3"]
_USAGE_CHAT = {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132}
_USAGE_RESPONSES = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 132,
}


def _offers_submit(tools: list[dict]) -> bool:
    names = {t.get("name") or t.get("function", {}).get("name") for t in tools}
    return "submit" in names


def chat_completion(request: dict, calls: int) -> dict:
    """A Chat Completions answer to `request` (the `calls`-th this server gave)."""
    message: dict = {"role": "assistant", "content": json.dumps(GENES)}
    finish = "stop"
    if _offers_submit(request.get("tools") or []):
        arguments = json.dumps({"answer": "done"})
        call = {"id": f"call_{calls}", "type": "function",
                "function": {"name": "submit", "arguments": arguments}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{calls}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "gpt-4o"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _USAGE_CHAT,
    }


def response(request: dict, calls: int) -> dict:
    """A Responses answer to `request` (the `calls`-th this server gave)."""
    if _offers_submit(request.get("tools") or []):
        item = {"type": "function_call", "id": f"fc_{calls}", "call_id": f"call_{calls}",
                "name": "submit", "arguments": json.dumps({"answer": "done"}),
                "status": "completed"}  # fmt: skip
    else:
        text = {"type": "output_text", "text": json.dumps(GENES), "annotations": []}
        item = {"type": "message", "id": f"msg_{calls}", "status": "completed",
                "role": "assistant", "content": [text]}  # fmt: skip
    return {
        "id": f"resp_{calls}",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": request.get("model", "o1"),
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": _USAGE_RESPONSES,
    }


class _Handler(BaseHTTPRequestHandler):
    calls = 0
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - the HTTP verb
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with self.lock:
            type(self).calls += 1
            calls = type(self).calls
        if self.path.endswith("/chat/completions"):
            answer = chat_completion(body, calls)
        elif self.path.endswith("/responses"):
            answer = response(body, calls)
        else:
            self.send_error(404)
            return
        send_json(self, answer)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def fake_openai() -> Iterator[dict[str, str]]:
    """Serve on a free loopback port; yield the environment that points Inspect there."""
    with local_server(_Handler) as url:
        yield {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "loopback"}
