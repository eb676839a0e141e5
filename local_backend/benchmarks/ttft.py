"""TTFT cold vs warm: a prompt whose first tokens another request already computed.

Cold: empty cache (reset before the run). Warm: the sharing prompt ran first.
The speed-up should approach total / uncached tokens (2,048 / 64 = 32 for the
acceptance case of a 2,048-token prompt sharing 1,984 tokens).
"""

from __future__ import annotations

import random

from local_backend.engine import LocalEngine
from local_backend.sampling_params import SamplingParams

from local_backend.workloads import random_token_ids

from .timing import cold_cache

ONE_TOKEN = SamplingParams(max_tokens=1, temperature=0.0, ignore_eos=True)


def _ttft(engine: LocalEngine, prompt: list[int]) -> tuple[float, int]:
    (out,) = engine.generate([prompt], ONE_TOKEN)
    return out.metrics.ttft, out.num_cached_tokens


def ttft_case(engine: LocalEngine, total: int, shared: int, repeats: int, seed: int = 0) -> dict:
    """Best-of-``repeats`` TTFT (s) of a ``total``-token prompt, cold and after a prompt sharing ``shared`` tokens."""
    rng = random.Random(seed + total + shared)
    prefix = random_token_ids(rng, shared)
    first = prefix + random_token_ids(rng, total - shared)
    second = prefix + random_token_ids(rng, total - shared)
    cold, warm, cached = [], [], 0
    _ttft(engine, random_token_ids(rng, 32))  # warm-up: first-call allocations are not TTFT
    for _ in range(repeats):
        cold_cache(engine)
        cold.append(_ttft(engine, second)[0])
        cold_cache(engine)
        _ttft(engine, first)
        t, cached = _ttft(engine, second)
        warm.append(t)
    cold_s, warm_s = min(cold), min(warm)
    return {"prompt_tokens": total, "shared_tokens": shared, "cached_tokens": cached,
            "ttft_cold_s": cold_s, "ttft_warm_s": warm_s, "speedup": cold_s / warm_s,
            "ideal_speedup": total / (total - cached)}


def run(model: object, quick: bool) -> dict:
    """TTFT cold vs warm on one engine.

    Args:
        model: ``LocalEngine``'s ``model`` (None: the embedded model).
        quick: a 256-token prompt sharing 240 tokens, once; else 2,048 sharing
            1,984 (best of 5) plus a sweep of shared lengths 0 / 512 / 1,024 /
            1,536 (best of 2 each).

    Returns:
        ``ttft_cold_s`` / ``ttft_warm_s`` (seconds), ``speedup`` (cold / warm),
        ``ideal_speedup`` (prompt tokens / uncached tokens), ``cached_tokens``,
        ``passed`` (speed-up >= 10, the issue's target) and ``sweep`` rows.

    Raises:
        RuntimeError: the prefix cache could not be reset for a cold run.
    """
    engine = LocalEngine(model, kv_cache_mb=256 if quick else 512)
    total, shared = (256, 240) if quick else (2048, 1984)
    repeats = 1 if quick else 5
    main = ttft_case(engine, total, shared, repeats)
    sweep = [] if quick else [ttft_case(engine, total, s, 2) for s in (0, 512, 1024, 1536)]
    return {"target": f"speed-up >= 10x ({total} tokens, {shared} shared)", "passed": main["speedup"] >= 10,
            **main, "sweep": sweep}
