#!/usr/bin/env python3
"""Per-request overhead of ``promptcache proxy`` on localhost, against direct calls to ``promptcache serve``.

Starts ``promptcache serve`` (embedded model) and ``promptcache proxy --upstream <serve> --trace <tmp>`` on free
loopback ports (or uses ``--url``), then sends ``--requests`` pairs of identical non-streaming chat completions
(one shared system prompt, ``max_tokens=1``, so the engine's work is a prefix hit and one decode step) with the
official ``openai`` client: direct and through the proxy in pairs, which one first alternating, so load
drifts and order effects hit both alike. Reports the
p50 / p90 latency of each and the p50 of the per-pair difference (proxy minus direct), in milliseconds, and the
same for the time to the first chunk of streamed requests (``--stream-requests`` pairs).

Goal (issue 13): the added p50 for a non-streaming request under 2 ms. The proxy runs its guard on every
request (tokenising the body): that is part of what is measured.

A table goes to stderr, JSON to stdout.

    .venv/bin/python bench/proxy_overhead.py > proxy-overhead.json
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai
from rich.console import Console
from rich.table import Table

ECHO_UPSTREAM = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0,
         "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
         "usage": {"prompt_tokens": 400, "completion_tokens": 1, "total_tokens": 401}}
CHUNK = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,' \\
        '"delta":{"content":"ok"},"finish_reason":null}]}\\n\\n'
async def health(request):
    return JSONResponse({"status": "ok"})
async def chat(request):
    body = await request.json()
    if body.get("stream"):
        async def events():
            yield CHUNK
            yield "data: [DONE]\\n\\n"
        return StreamingResponse(events(), media_type="text/event-stream")
    return JSONResponse(REPLY)
app = Starlette(routes=[Route("/health", health), Route("/v1/chat/completions", chat, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
"""
"""A stand-in upstream that answers at once (``--echo-upstream``): what is left is the proxy's own cost."""

SYSTEM = "You are the support agent of Acme. " + " ".join(f"Rule {i}: answer with the order number first."
                                                           for i in range(1, 40))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], ready_url: str, log: Path) -> subprocess.Popen:
    name = log.stem
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{name} exited with {process.returncode}:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(ready_url, timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    sys.exit(f"{name} did not become ready:\n{log.read_text()[-2000:]}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running promptcache serve (default: start one)")
    parser.add_argument("--echo-upstream", action="store_true",
                        help="put the proxy in front of a stand-in that answers at once instead of serve, so the "
                             "figures are the proxy's own cost without the engine's load on the same cores")
    parser.add_argument("--requests", type=int, default=200, help="non-streaming pairs [default: 200]")
    parser.add_argument("--stream-requests", type=int, default=50, help="streaming pairs [default: 50]")
    parser.add_argument("--guard", choices=["warn", "off"], default="warn", help="the proxy's --guard [default: warn]")
    parser.add_argument("--no-trace", action="store_true", help="run the proxy without --trace")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="proxy-bench-"))
    processes = []
    try:
        serve_url = args.url
        if args.echo_upstream:
            port = free_port()
            serve_url = f"http://127.0.0.1:{port}"
            processes.append(start([sys.executable, "-c", ECHO_UPSTREAM, str(port)], f"{serve_url}/health",
                                   folder / "echo.log"))
        elif serve_url is None:
            port = free_port()
            serve_url = f"http://127.0.0.1:{port}"
            processes.append(start([sys.executable, "-m", "promptcache.cli", "serve", "--port", str(port),
                                    "--kv-cache-mb", "64", "--log-level", "warning"], f"{serve_url}/health",
                                   folder / "serve.log"))
        port = free_port()
        proxy_url = f"http://127.0.0.1:{port}"
        trace = [] if args.no_trace else ["--trace", str(folder / "trace.jsonl")]
        processes.append(start([sys.executable, "-m", "promptcache.cli", "proxy", "--upstream", serve_url, "--port",
                                str(port), "--guard", args.guard, *trace], f"{proxy_url}/health",
                               folder / "proxy.log"))
        direct = openai.OpenAI(base_url=f"{serve_url}/v1", api_key="bench", max_retries=0)
        proxied = openai.OpenAI(base_url=f"{proxy_url}/v1", api_key="bench", max_retries=0)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Where is order 1042?"}]

        def call(client: openai.OpenAI) -> float:
            start_s = time.perf_counter()
            client.chat.completions.create(model="m", max_tokens=1, temperature=0, messages=messages)
            return (time.perf_counter() - start_s) * 1000

        def first_chunk(client: openai.OpenAI) -> float:
            start_s = time.perf_counter()
            stream = client.chat.completions.create(model="m", max_tokens=4, temperature=0, messages=messages,
                                                    stream=True)
            next(iter(stream))
            elapsed = (time.perf_counter() - start_s) * 1000
            for _ in stream:
                pass
            return elapsed

        for _ in range(10):  # warm-up: connections, the cached prefix, the proxy's tokenizer
            call(direct), call(proxied)
        results = {}
        for name, measure, count in (("non-streaming", call, args.requests),
                                     ("streaming TTFT", first_chunk, args.stream_requests)):
            pairs = []
            for n in range(count):  # alternate which goes first, so an order effect falls on both sides
                if n % 2:
                    through_ms = measure(proxied)
                    pairs.append((measure(direct), through_ms))
                else:
                    pairs.append((measure(direct), measure(proxied)))
            plain, through = [p[0] for p in pairs], [p[1] for p in pairs]
            results[name] = {"requests": count, "direct_p50_ms": statistics.median(plain),
                             "direct_p90_ms": percentile(plain, 0.9), "proxy_p50_ms": statistics.median(through),
                             "proxy_p90_ms": percentile(through, 0.9),
                             "added_p50_ms": statistics.median(b - a for a, b in pairs)}
        recorded = 0 if args.no_trace else len((folder / "trace.jsonl").read_text().splitlines())
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=15)
    goal = results["non-streaming"]["added_p50_ms"] < 2.0
    print(json.dumps({"upstream": "echo" if args.echo_upstream else "serve", "proxy_guard": args.guard, "proxy_trace": not args.no_trace, "results": results, "trace_lines": recorded, "goal_added_p50_under_2ms": goal}, indent=2))
    table = Table(title="promptcache proxy overhead on localhost (ms)")
    for column in ("", "direct p50", "direct p90", "proxy p50", "proxy p90", "added p50"):
        table.add_column(column, justify="right" if column else "left")
    for name, r in results.items():
        table.add_row(name, *(f"{r[k]:.2f}" for k in ("direct_p50_ms", "direct_p90_ms", "proxy_p50_ms",
                                                       "proxy_p90_ms", "added_p50_ms")))
    console = Console(stderr=True)
    console.print(table)
    console.print(f"goal: added p50 under 2 ms for a non-streaming request: {'met' if goal else 'NOT met'}")


if __name__ == "__main__":
    main()
