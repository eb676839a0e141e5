#!/usr/bin/env python3
"""Load on ``promptcache serve``: concurrent chat requests sharing a system prompt.

Starts ``promptcache serve`` on a free loopback port (embedded model unless
``--model``), or uses ``--url``, then sends ``--requests`` streaming chat
completions (each a different question after one shared system prompt) from
``--threads`` threads with the official ``openai`` client. Measures TTFT
(send to first chunk), requests/s, and the hit tokens the server reported
against the **sequential oracle**: the block-aligned prefix hits the same
requests would get one at a time (``local_backend.oracle.PrefixTrieOracle``
over the server's own ``/tokenize`` ids). Requests admitted while the shared
prefix is still being computed may miss it, so the bar is 90% of the oracle.

A rich table goes to stderr, JSON to stdout; exit 1 when a request failed or
the hit tokens fall below 90% of the oracle. Traffic goes to 127.0.0.1 only.

    .venv/bin/python bench/serve_load.py > serve-load.json
    .venv/bin/python bench/serve_load.py --url http://127.0.0.1:8000 --requests 16
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
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
from rich.console import Console
from rich.table import Table

from local_backend.oracle import PrefixTrieOracle
from promptcache.misses.prefix_index import common_prefix

HIT_BAR = 0.9
TOPICS = ("returns", "shipping", "warranty", "sizing", "repairs", "gift cards", "rentals", "loyalty points")


def system_prompt(words: int) -> str:
    rules = [f"Rule {i}: answer questions about {TOPICS[i % len(TOPICS)]} in two sentences and cite the policy "
             f"section {i}." for i in range(words // 16 + 1)]
    return "You are the support assistant of Harborline Outfitters.\n" + "\n".join(rules)


def questions(n: int) -> list[str]:
    return [f"Customer {i}: what is your policy on {TOPICS[i % len(TOPICS)]} for order {1000 + i}?"
            for i in range(n)]


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "promptcache.cli", "serve", "--port", str(port), "--log-level", "warning",
               "--kv-cache-mb", str(args.kv_cache_mb), "--max-num-seqs", str(args.max_num_seqs)]
    if args.model:
        command += ["--model", args.model]
    if args.tokenizer:
        command += ["--tokenizer", args.tokenizer]
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise SystemExit(f"promptcache serve exited:\n{log.read().decode(errors='replace')[-3000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("promptcache serve did not start within 180 s")


def one_request(client: openai.OpenAI, model: str, messages: list[dict], max_tokens: int) -> dict:
    started = time.perf_counter()
    ttft, usage = None, None
    stream = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens, stream=True,
                                            stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    for chunk in stream:
        if ttft is None and chunk.choices:
            ttft = time.perf_counter() - started
        if chunk.usage is not None:
            usage = chunk.usage
    return {"ttft_s": ttft, "latency_s": time.perf_counter() - started, "prompt_tokens": usage.prompt_tokens,
            "cached_tokens": usage.prompt_tokens_details.cached_tokens, "output_tokens": usage.completion_tokens}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(args: argparse.Namespace, url: str) -> dict:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0, timeout=600)
    model = client.models.list().data[0].id
    system = system_prompt(args.system_words)
    chats = [[{"role": "system", "content": system}, {"role": "user", "content": q}] for q in questions(args.requests)]
    ids = [httpx.post(f"{url}/tokenize", json={"messages": chat}, timeout=60).json()["tokens"] for chat in chats]
    oracle = PrefixTrieOracle(args.block_size)
    oracle_tokens = 0
    for prompt in ids:  # one at a time, in submission order, one output token's KV never cached: prompts only
        oracle_tokens += oracle.hit_tokens(prompt)
        oracle.insert(prompt)
    httpx.post(f"{url}/v1/cache/reset", timeout=60)
    results, errors = [], []
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        futures = [pool.submit(one_request, client, model, chat, args.max_tokens) for chat in chats]
        for future in futures:
            try:
                results.append(future.result())
            except Exception as exc:  # counted and reported, the run goes on
                errors.append(f"{type(exc).__name__}: {exc}")
    wall = time.perf_counter() - started
    ttfts = [r["ttft_s"] for r in results if r["ttft_s"] is not None]
    hit = sum(r["cached_tokens"] for r in results)
    return {
        "requests": args.requests, "threads": args.threads, "completed": len(results), "errors": errors,
        "max_tokens": args.max_tokens, "wall_s": wall, "requests_per_s": len(results) / wall,
        "ttft_p50_s": statistics.median(ttfts) if ttfts else None,
        "ttft_p99_s": percentile(ttfts, 0.99) if ttfts else None,
        "prompt_tokens": sum(r["prompt_tokens"] for r in results), "hit_tokens": hit,
        "oracle_tokens": oracle_tokens, "hit_vs_oracle": hit / oracle_tokens if oracle_tokens else None,
        "output_tokens": sum(r["output_tokens"] for r in results),
        "output_tokens_per_s": sum(r["output_tokens"] for r in results) / wall,
        "shared_prefix_tokens": common_prefix(ids[0], ids[1]) if len(ids) > 1 else 0,
        "passed": not errors and len(results) == args.requests and hit >= HIT_BAR * oracle_tokens,
    }


def table(result: dict) -> Table:
    out = Table(title="promptcache serve under load", header_style="bold")
    out.add_column("figure")
    out.add_column("value", justify="right")
    rows = [("requests (threads)", f"{result['completed']}/{result['requests']} ({result['threads']})"),
            ("errors", str(len(result["errors"]))), ("wall", f"{result['wall_s']:.1f} s"),
            ("requests/s", f"{result['requests_per_s']:.2f}"),
            ("TTFT p50 / p99", f"{result['ttft_p50_s'] * 1000:,.0f} / {result['ttft_p99_s'] * 1000:,.0f} ms"
             if result["ttft_p50_s"] is not None else "-"),
            ("prompt tokens", f"{result['prompt_tokens']:,}"),
            ("hit tokens / sequential oracle", f"{result['hit_tokens']:,} / {result['oracle_tokens']:,} "
                                               f"({(result['hit_vs_oracle'] or 0):.1%}; bar {HIT_BAR:.0%})"),
            ("output tokens/s", f"{result['output_tokens_per_s']:.1f}"),
            ("verdict", "pass" if result["passed"] else "FAIL")]
    for row in rows:
        out.add_row(*row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="Use this running server instead of starting one.")
    parser.add_argument("--model", help="Model directory for the started server [default: embedded].")
    parser.add_argument("--tokenizer", help="Tokenizer for the started server ('chatml' or a directory).")
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=8, help="Output tokens per request (ignore_eos).")
    parser.add_argument("--system-words", type=int, default=600, help="Length of the shared system prompt.")
    parser.add_argument("--block-size", type=int, default=16, help="The server's block size (oracle rounding).")
    parser.add_argument("--kv-cache-mb", type=float, default=256)
    parser.add_argument("--max-num-seqs", type=int, default=32)
    args = parser.parse_args(argv)
    process = None
    url = args.url.rstrip("/").removesuffix("/v1") if args.url else None
    if url is None:
        process, url = start_server(args)
    try:
        result = run(args, url)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    Console(stderr=True).print(table(result))
    print(json.dumps(result, indent=2))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
