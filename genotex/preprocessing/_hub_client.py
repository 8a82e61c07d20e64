"""The Hub client's HTTP, bounded as genotex's own transfers are.

`huggingface_hub` makes its requests (a revision, the tree listing) with a client that
waits forever (`timeout=None`): a listing that stalled, or dribbled a byte every three
seconds, held `download benchmark --dry-run` for minutes. Here the client waits at most
`STALL_SECONDS` for a byte and keeps the transfers' rate floor (`MIN_RATE` over
`WINDOW`); a redirect to another origin drops `Authorization` (httpx's own rule).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ._transfer import STALL_SECONDS, floored

__all__ = ["bounded_hub_client"]


@contextlib.contextmanager
def bounded_hub_client() -> Iterator[None]:
    """While the block runs, the Hub client's requests (the revision, the tree listing) wait
    at most `STALL_SECONDS` for a byte and keep the transfers' rate floor (`TooSlow`): its
    own client waits forever, so a listing that stalls or dribbles held `download
    benchmark` (and `--dry-run`) for minutes. The client in place before is put back.
    """
    from huggingface_hub.utils import _http

    before = getattr(_http, "_GLOBAL_CLIENT_FACTORY", _http.default_client_factory)
    _http.set_client_factory(_bounded_client)
    try:
        yield
    finally:
        _http.set_client_factory(before)


def _bounded_client() -> Any:
    """An HTTP client like the Hub client's own, with a stall bound and a rate floor."""
    import httpx2
    from huggingface_hub.utils._http import hf_request_event_hook

    class Floor(httpx2.SyncByteStream):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __iter__(self) -> Iterator[bytes]:
            return floored(self.inner)

        def close(self) -> None:
            self.inner.close()

    class Transport(httpx2.HTTPTransport):
        def handle_request(self, request: Any) -> Any:
            response = super().handle_request(request)
            response.stream = Floor(response.stream)
            return response

    return httpx2.Client(event_hooks={"request": [hf_request_event_hook]}, follow_redirects=True,
                         timeout=httpx2.Timeout(STALL_SECONDS), transport=Transport())  # fmt: skip
