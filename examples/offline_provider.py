"""An offline stand-in for the Anthropic and OpenAI APIs, for running the examples without a key or a network.

The official SDK clients are real; only their HTTP transport is replaced by an
``httpx2.MockTransport`` whose handler answers like the provider: a scripted
reply (text or tool calls) and a ``usage`` object of an idealised prefix
cache: the tokens a request shares with the best earlier request (ChatML /
cl100k through :mod:`promptcache.decompose`) count as cached when they reach
the 1,024-token minimum (OpenAI: rounded down to 128-token steps). Real
providers differ in detail (promptcache simulate models them); the point here
is to show the SDK's bodies, traces and statistics end to end.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from promptcache.decompose import decompose
from promptcache.prefix_index import PrefixIndex, common_prefix
from promptcache.trace import validate_trace

Reply = Callable[[dict[str, Any]], dict[str, Any]]
"""``reply(body) -> {"text": str}`` or ``{"tool_calls": [(name, {args})]}``."""

MINIMUM, STEP = 1024, 128


class OfflineProvider:
    """Answers requests of one API (``anthropic.messages`` or ``openai.chat``) and remembers their tokens."""

    def __init__(self, api: str, reply: Reply) -> None:
        self.api, self.reply = api, reply
        self.index = PrefixIndex()
        self.tokens: dict[int, list[int]] = {}
        self.bodies: list[bytes] = []

    def cached_tokens(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, tokens shared with the best earlier request if >= the minimum, else 0)."""
        tokens = decompose(body, self.api).tokens
        best = self.index.best(tokens)
        shared = common_prefix(tokens, self.tokens[best]) if best is not None else 0
        key = len(self.tokens)
        self.tokens[key] = tokens
        self.index.add(key, tokens)
        return len(tokens), shared if shared >= MINIMUM else 0

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(request.content)
        body = json.loads(request.content)
        total, cached = self.cached_tokens(body)
        answer = self.reply(body)
        n = len(self.bodies)
        if self.api == "anthropic.messages":
            content = [{"type": "text", "text": answer["text"]}] if "text" in answer else [
                {"type": "tool_use", "id": f"toolu_{n:02d}{i:02d}", "name": name, "input": args}
                for i, (name, args) in enumerate(answer["tool_calls"])]
            return httpx2.Response(200, json={
                "id": f"msg_{n}", "type": "message", "role": "assistant", "model": body["model"], "content": content,
                "stop_reason": "end_turn" if "text" in answer else "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 20, "cache_read_input_tokens": cached,
                          "cache_creation_input_tokens": total - cached}})
        message: dict[str, Any] = {"role": "assistant", "content": answer.get("text")}
        if "tool_calls" in answer:
            message["tool_calls"] = [{"id": f"call_{n:02d}{i:02d}", "type": "function", "function": {
                "name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(answer["tool_calls"])]
        stepped = cached and MINIMUM + STEP * ((cached - MINIMUM) // STEP)
        return httpx2.Response(200, json={
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if "tool_calls" in answer else "stop"}],
            "usage": {"prompt_tokens": total, "completion_tokens": 20, "total_tokens": total + 20,
                      "prompt_tokens_details": {"cached_tokens": stepped}}})

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
              f"{row['hit_rate']:>9.0%} {ratio:>16.2f}x")


def example_args(doc: str, argv: list[str] | None, **extra: dict[str, Any]) -> argparse.Namespace:
    """The examples' command line: ``--live``, ``--print-bodies``, ``--trace PATH`` and ``extra`` options."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--live", action="store_true", help="send to the real API (needs the provider's API key)")
    parser.add_argument("--print-bodies", action="store_true", help="print the JSON of the requests")
    parser.add_argument("--trace", type=Path, help="where to write the trace (default: a temporary file)")
    for flag, options in extra.items():
        parser.add_argument(f"--{flag}", **options)
    return parser.parse_args(argv)


def report(client: Any, requests: int) -> int:
    """Print the wrapper's statistics and validate its trace; the exit status (0 when the trace is valid)."""
    print_stats("usage statistics (the client wrapper's, from the provider's usage fields)", client.stats.summary())
    problems = validate_trace(client.trace)
    print(f"\ntrace: {client.trace} ({requests} requests), validator: {'ok' if not problems else problems}")
    return 0 if not problems else 1
