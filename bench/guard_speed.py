"""Speed of the miss-cause classifier (promptcache.misses.guard.classify_requests).

Goal (issue 3 / SDK-core brief): a trace of 20 requests x 7k tokens classifies in
well under a second. Measures, per shared trace and for a synthetic 20 x ~7.3k-token
trace: the time to classify every request against the ones before it, cold (each
body tokenised for the first time) and warm (renderings memoised), in milliseconds.
The tokenizer is loaded before timing starts.

Memory (``--memory N``, default 32): what a client wrapper's runtime guard
(:class:`promptcache.misses.guard.PrefixGuard`) retains per request it remembers, at
the workload of ``bench/sdk_overhead.py`` (40 tools, a 20k-token document, 30
turns: ~30k tokens a request), measured with tracemalloc over N requests built
and checked like the wrapper does (body rendered per request). Reported with the
decompose memo cleared (the guard alone) and with it (process-wide). Goal: the
default cap (256 requests) holds well under 100 MB at that size.

Usage:  python bench/guard_speed.py [--shared ../shared] [--repeat 3] [--memory 32]
Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import copy
import gc
import inspect
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from promptcache.misses import rendering as _decompose
from promptcache.tokens import chatml
from promptcache.tokens.chatml import chatml_encoding
from promptcache.misses.guard import classify_requests
from promptcache.trace.records import read_trace


def _timed(records, repeat: int) -> tuple[float, float]:
    """(cold ms, best warm ms) to classify ``records``."""
    _decompose.clear_cache()
    chatml.clear_cache()
    start = time.perf_counter()
    classify_requests(records)
    cold = (time.perf_counter() - start) * 1000
    warm = []
    for _ in range(repeat):
        start = time.perf_counter()
        classify_requests(records)
        warm.append((time.perf_counter() - start) * 1000)
    return cold, min(warm)


def _synthetic(traces_dir: Path) -> list[tuple[str, dict]]:
    """20 requests of ~7.3k tokens: the last agent request with 20 different new user turns."""
    body = read_trace(traces_dir / "good_agent_tools.jsonl")[-1].body
    out = []
    for i in range(20):
        variant = copy.deepcopy(body)
        variant["messages"].append({"role": "assistant", "content": f"Step {i} done."})
        variant["messages"].append({"role": "user", "content": f"Next check number {i}: is checkout-api healthy?"})
        out.append(("openai.chat", variant))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_shared = os.environ.get("PROMPTCACHE_SHARED", str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--shared", default=default_shared, help="the shared/ folder (default: ../shared)")
    parser.add_argument("--repeat", type=int, default=3, help="warm repetitions (best is reported)")
    parser.add_argument("--memory", type=int, default=32, help="requests for the guard memory measurement (0: skip)")
    args = parser.parse_args(argv)
    traces_dir = Path(args.shared) / "traces"
    if not traces_dir.is_dir():
        print(f"traces not found in {traces_dir}; pass --shared", file=sys.stderr)
        return 2
    chatml_encoding()  # load the tokenizer outside the timings
    rows = []
    workloads = [(path.stem, read_trace(path)) for path in sorted(traces_dir.glob("*.jsonl"))]
    workloads.append(("synthetic_20x7k", _synthetic(traces_dir)))
    for name, records in workloads:
        cold, warm = _timed(records, args.repeat)
        tokens = [len(_decompose.decompose(body, api).tokens) for api, body in
                  ((r.api, r.body) if hasattr(r, "body") else r for r in records)]
        rows.append({"trace": name, "requests": len(records), "mean_prompt_tokens": round(statistics.mean(tokens)),
                     "cold_ms": round(cold, 1), "warm_ms": round(warm, 1),
                     "cold_ms_per_request": round(cold / len(records), 2)})
    goal = next(r for r in rows if r["trace"] == "synthetic_20x7k")
    result = {"benchmark": "guard_speed", "goal": "20 requests x 7k tokens well under 1000 ms (cold)",
              "goal_met": goal["cold_ms"] < 1000, "rows": rows}
    if args.memory:
        result["memory"] = guard_memory(args.memory)
    print(json.dumps(result, indent=2))
    print()
    header = f"{'trace':<30} {'req':>4} {'tokens':>7} {'cold ms':>9} {'warm ms':>9} {'ms/req':>7}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['trace']:<30} {r['requests']:>4} {r['mean_prompt_tokens']:>7} {r['cold_ms']:>9} "
              f"{r['warm_ms']:>9} {r['cold_ms_per_request']:>7}")
    if args.memory:
        m = result["memory"]
        print(f"\nguard memory ({m['requests']} requests of {m['prompt_tokens']:,} tokens): "
              f"{m['guard_mb_per_request']:.3f} MB/request (guard alone), {m['process_mb_per_request']:.3f} MB/request "
              f"(with the decompose memo); the default cap of {m['default_cap']} requests holds "
              f"{m['default_cap_mb']:.0f} MB")
    return 0


def guard_memory(requests: int) -> dict:
    """Bytes a PrefixGuard retains per remembered request at the sdk_overhead workload (tracemalloc)."""
    from sdk_overhead import make_conversation, make_document, make_tools

    from promptcache import PromptBuilder
    from promptcache.misses.guard import PrefixGuard
    from promptcache.prompt.stability import LayerRegistry

    base = (PromptBuilder(registry=LayerRegistry()).system("You are the back-office assistant.").tools(make_tools())
            .document(make_document(), name="handbook"))
    conversation = make_conversation()
    model, api = "claude-sonnet-4-6", "anthropic.messages"
    PrefixGuard(api).compare(base.history(conversation).user("warm-up").build().to_anthropic(model))
    _decompose.clear_cache()
    chatml.clear_cache()
    gc.collect()
    tracemalloc.start()
    guard = PrefixGuard(api, max_requests=requests)
    start = tracemalloc.get_traced_memory()[0]
    for i in range(requests):
        prompt = base.history(conversation).user(f"Question number {i}?").build()
        guard.compare(prompt.to_anthropic(model), layers=prompt.layer_hints(api))
    del prompt
    gc.collect()
    with_memo = tracemalloc.get_traced_memory()[0] - start
    _decompose.clear_cache()
    chatml.clear_cache()
    gc.collect()
    alone = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    tokens = len(guard.renderings[0].tokens)
    default_cap = inspect.signature(PrefixGuard).parameters["max_requests"].default
    return {"requests": requests, "prompt_tokens": tokens, "guard_mb_per_request": round(alone / requests / 1e6, 3),
            "process_mb_per_request": round(with_memo / requests / 1e6, 3), "default_cap": default_cap,
            "default_cap_mb": round(alone / requests * default_cap / 1e6, 1)}


if __name__ == "__main__":
    sys.exit(main())
