"""Fixtures of the example apps' tests: a local stand-in for the providers' APIs, and ``examples/`` on the path."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


Answer = Callable[[str], tuple[int, bytes]]
"""``answer(path) -> (HTTP status, JSON body bytes)`` of :class:`LocalAPI`."""


class LocalAPI(ThreadingHTTPServer):
    """A local stand-in for api.anthropic.com / api.openai.com that answers every POST with ``answer(path)``.

    Records ``(path, the key the client sent in either SDK's header)`` per request in :attr:`requests`.
    Sends ``retry-after-ms: 1``: the SDKs keep their own retries of 429 / 5xx (two by default), instantly.
    """

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[tuple[str, str]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("content-length", 0)))
                key = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix("Bearer ")
                api.requests.append((self.path, key))
                status, data = api.answer(self.path)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def local_api() -> Iterator[LocalAPI]:
    """A running :class:`LocalAPI` (answering 500 until the test sets ``answer``), shut down after the test."""
    server = LocalAPI(lambda path: (500, b"{}"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def examples_on_path(monkeypatch) -> Iterator[None]:
    """``examples/`` on ``sys.path`` to import the example apps as modules; they are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples"))
    yield
    for name in ("support_bot", "doc_qa", "tool_agent", "offline_provider", "live_api"):
        sys.modules.pop(name, None)
