"""An offline stand-in for the Anthropic and OpenAI APIs, for running the examples without a key or a network.

The official SDK clients are real; only their HTTP transport is replaced by an
``httpx2.MockTransport`` whose handler answers like the provider: a scripted
reply (text or tool calls) and the ``usage`` the provider's prompt cache would
report, computed by promptcache's own simulator of that provider's documented
rules (:mod:`promptcache.simulate`: breakpoints, minimums, TTLs, routing; the
numbers in ``promptcache/data/providers.toml``). A request the real API would
refuse (a fifth breakpoint, a ``1h`` marker after a ``5m`` one) gets the HTTP
400 the API would send.

Time is simulated too: a :class:`VirtualClock` advances by a realistic gap after
every request (the model's reply plus the user's think time, or a tool run in
an agent loop), and the examples pass it to ``promptcache.wrap(..., clock=...)``,
so the recorded trace carries the same ``t``. ``promptcache simulate`` on that
trace therefore reports exactly the hit rate the example printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from promptcache.simulate import make_simulator
from promptcache.trace import TraceFormatError, check_trace_path, parse_record, validate_trace

Reply = Callable[[dict[str, Any]], dict[str, Any]]
"""``reply(body) -> {"text": str}`` or ``{"tool_calls": [(name, {args})]}``."""

CHAT_GAPS = (14.2, 37.5, 8.9, 52.3, 21.6, 45.0, 11.4, 29.8)
"""Seconds from one request's start to the next one's in a chat: the reply (a few seconds) plus reading and typing."""
AGENT_GAPS = (3.1, 2.4, 4.7, 1.9)
"""Seconds between the steps of an agent loop: the reply plus running the tool."""

_PROVIDERS = {"anthropic.messages": "anthropic", "openai.chat": "openai"}


class VirtualClock:
    """Simulated seconds (monotonic), in tenths so that sums stay exact: ``clock()`` reads it."""

    def __init__(self, gaps: Iterable[float] = CHAT_GAPS) -> None:
        self.tenths = 0
        self.gaps = itertools.cycle(gaps)

    def __call__(self) -> float:
        return self.tenths / 10

    def advance(self, seconds: float | None = None) -> None:
        """Move on by ``seconds`` (default: the next gap of the cycle)."""
        self.tenths += round((next(self.gaps) if seconds is None else seconds) * 10)


class OfflineProvider:
    """Answers requests of one API (``anthropic.messages`` or ``openai.chat``) with its cache simulator's usage."""

    def __init__(self, api: str, reply: Reply, *, gaps: Iterable[float] = CHAT_GAPS) -> None:
        self.api, self.reply = api, reply
        self.clock = VirtualClock(gaps)
        self.simulator = make_simulator(_PROVIDERS[api])
        self.bodies: list[bytes] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(request.content)
        body = json.loads(request.content)
        result = self.simulator.simulate(body, self.clock())  # the request starts now
        self.clock.advance()
        if result.error:
            kind = {"type": "error", "error": {"type": "invalid_request_error", "message": result.error}} \
                if self.api == "anthropic.messages" else {"error": {"message": result.error, "type": "invalid_request_error"}}
            return httpx2.Response(400, json=kind)
        usage, answer, n = result.usage, self.reply(body), len(self.bodies)
        if self.api == "anthropic.messages":
            content = [{"type": "text", "text": answer["text"]}] if "text" in answer else [
                {"type": "tool_use", "id": f"toolu_{n:02d}{i:02d}", "name": name, "input": args}
                for i, (name, args) in enumerate(answer["tool_calls"])]
            return httpx2.Response(200, json={
                "id": f"msg_{n}", "type": "message", "role": "assistant", "model": body["model"], "content": content,
                "stop_reason": "end_turn" if "text" in answer else "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": usage.uncached, "output_tokens": 20,
                          "cache_read_input_tokens": usage.cache_read, "cache_creation_input_tokens": usage.cache_write,
                          "cache_creation": {"ephemeral_5m_input_tokens": usage.cache_write_5m,
                                             "ephemeral_1h_input_tokens": usage.cache_write_1h}}})
        message: dict[str, Any] = {"role": "assistant", "content": answer.get("text")}
        if "tool_calls" in answer:
            message["tool_calls"] = [{"id": f"call_{n:02d}{i:02d}", "type": "function", "function": {
                "name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(answer["tool_calls"])]
        return httpx2.Response(200, json={
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if "tool_calls" in answer else "stop"}],
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": 20,
                      "total_tokens": usage.prompt_tokens + 20,
                      "prompt_tokens_details": {"cached_tokens": usage.cache_read}}})

    def anthropic_client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(api_key="offline", max_retries=0,
                                   http_client=httpx2.Client(transport=httpx2.MockTransport(self.handle)))

    def openai_client(self) -> openai.OpenAI:
        return openai.OpenAI(api_key="offline", max_retries=0,
                             http_client=httpx2.Client(transport=httpx2.MockTransport(self.handle)))


def print_stats(title: str, summary: dict[str, Any]) -> None:
    """The client wrapper's usage statistics as a small table."""
    print(f"\n{title}")
    print(f"{'session':<16} {'requests':>8} {'prompt tok':>11} {'cached':>8} {'hit rate':>9} {'cost vs no cache':>17}")
    rows = [*summary["sessions"].items(), ("total", summary["total"])]
    for name, row in rows:
        ratio = row["cost"] / row["cost_without_cache"] if row["cost_without_cache"] else 1.0
        print(f"{name:<16} {row['requests']:>8} {row['prompt_tokens']:>11,} {row['cache_read_tokens']:>8,} "
              f"{row['hit_rate']:>9.1%} {ratio:>16.2f}x")


def example_args(doc: str, argv: list[str] | None, **extra: dict[str, Any]) -> argparse.Namespace:
    """The examples' command line: ``--live``, ``--print-bodies``, ``--trace PATH`` and ``extra`` options."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--live", action="store_true", help="send to the real API (needs the provider's API key)")
    parser.add_argument("--print-bodies", action="store_true", help="print the JSON of the requests")
    parser.add_argument("--trace", type=Path,
                        help="where to write the trace, replaced if it exists (default: a temporary file)")
    for flag, options in extra.items():
        parser.add_argument(f"--{flag}", **options)
    return parser.parse_args(argv)


class RecordedTrace:
    """Where one run of an example records its trace: :attr:`recording`, renamed to :attr:`path` on success.

    A context manager (:func:`recorded_trace` makes it): the run records into
    :attr:`recording`, a new empty file beside :attr:`path` in the same folder;
    when the ``with`` block ends normally it is renamed over :attr:`path`
    (:func:`os.replace`, atomic; an existing file there is replaced, saying
    ``replacing existing trace FILE`` on stderr); when it raises (an API error,
    Ctrl-C) it is removed and an existing trace at :attr:`path` is left as it was.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recording: Path | None = None

    def __enter__(self) -> RecordedTrace:
        """Make :attr:`recording`: a new empty file ``.NAME.XXXX.tmp`` in :attr:`path`'s folder."""
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        self.recording = Path(name)
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        assert self.recording is not None
        if kind is not None:
            self.recording.unlink(missing_ok=True)
            return
        if self.path.exists():
            print(f"replacing existing trace {self.path}", file=sys.stderr)
            shutil.copymode(self.path, self.recording)
        else:  # mkstemp made it private (0600): give it the mode a new file gets
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.recording, 0o666 & ~umask)
        os.replace(self.recording, self.path)


def recorded_trace(given: Path | None, name: str) -> RecordedTrace:
    """The trace file of this run (:class:`RecordedTrace`): each run of an example writes a trace of its own requests.

    ``given`` (``--trace``) has ``~`` expanded and is checked as ``promptcache.wrap`` checks it (the folder
    must exist and be writable, it must not be a folder). An existing file is replaced only when the run
    succeeds, and only when it is a trace (its first line a trace record) or empty: any other file is
    refused, never overwritten. ``promptcache.wrap(trace=...)`` itself always appends, so that several
    processes can record into one trace. ``None``: ``name`` in a new temporary folder.

    Raises:
        SystemExit: status 2, after one line on stderr (``error: trace '/nonexistent/x.jsonl': the folder
            /nonexistent does not exist; ...``), when the path is a folder, cannot be written, or is a file
            that is not a trace.
    """
    if given is None:
        return RecordedTrace(Path(tempfile.mkdtemp()) / name)
    try:
        path = Path(check_trace_path(given))
        problem = _not_a_trace(path)
        if problem:
            raise OSError(f"trace {str(given)!r} exists and is not a trace ({problem}); pass a new file name, "
                          "or a trace file to replace")
        return RecordedTrace(path)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _not_a_trace(path: Path) -> str | None:
    """Why the existing file ``path`` is not a trace (its first non-blank line is not a record); None when it is
    one, is empty, or does not exist."""
    try:
        with path.open("rb") as fh:
            first = next((line for line in fh if line.strip()), None)
    except FileNotFoundError:
        return None
    if first is None:
        return None
    try:
        parse_record(first.decode("utf-8-sig"), line=1)
    except UnicodeDecodeError:
        return "line 1 is not UTF-8 text"
    except TraceFormatError as exc:
        return f"line 1: {exc.reason}"
    return None


def wrap_options(provider: OfflineProvider, live: bool) -> dict[str, Any]:
    """Extra ``promptcache.wrap`` options: offline, the trace's ``t`` comes from the provider's virtual clock."""
    return {} if live else {"clock": provider.clock}


def report(client: Any, requests: int, trace: Path) -> int:
    """Print the wrapper's statistics and validate the ``trace`` it recorded (:attr:`RecordedTrace.path`, after
    the run); the exit status (0 when the trace is valid)."""
    summary = client.stats.summary()
    print_stats("usage statistics (the client wrapper's, from the provider's usage fields)", summary)
    problems = validate_trace(trace)
    print(f"\ntrace: {trace} ({requests} requests), validator: {'ok' if not problems else problems}")
    print(f"hit rate {summary['total']['hit_rate']:.1%}; check it with: promptcache simulate {trace}")
    return 0 if not problems else 1
