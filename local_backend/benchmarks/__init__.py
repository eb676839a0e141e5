"""Engine benchmarks (``promptcache engine-bench``, ``bench/engine.py``): JSON plus a rich table.

Timing benchmarks (TTFT, throughput, no-reuse control) run on the embedded
default model; cache-behaviour benchmarks (hit rate / oracle, eviction,
fragmentation) on a tiny model with the same vocabulary by default, since hit
counts and block accounting do not depend on the model's width. ``quick=True``
shrinks every benchmark to a smoke run of a few seconds on tiny models: its
figures are not the acceptance figures, so every ``passed`` is None (not judged).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from typing import Any

import torch

from . import eviction, fragmentation, hit_rate, throughput, ttft
from .models import hf_model, resolve_model

BENCHMARKS = ("ttft", "throughput", "no_reuse", "fragmentation", "eviction", "hit_rate")


def run_benchmarks(
    quick: bool = False,
    only: tuple[str, ...] | None = None,
    timing_model: str = "embedded",
    cache_model: str = "tiny",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the engine benchmarks and return their results (plain JSON-able values).

    Each benchmark's result has ``target`` and ``passed``: True / False against
    the target, None where nothing is judged (every benchmark of a quick run;
    the eviction benchmark, which reports its hit rates side by side).

    Args:
        quick: smoke-test sizes on the tiny model (seconds, not minutes).
        only: a subset of :data:`BENCHMARKS`.
        timing_model / cache_model: ``"embedded"`` or ``"tiny"``.
        progress: called with each benchmark's name before it starts.

    Raises:
        ValueError: an unknown benchmark or model name.
    """
    selected = only or BENCHMARKS
    unknown = set(selected) - set(BENCHMARKS)
    if unknown:
        raise ValueError(f"unknown benchmark(s) {sorted(unknown)}; choose from {', '.join(BENCHMARKS)}")
    if quick:
        timing_model = cache_model = "tiny"
    timing, cache = resolve_model(timing_model), resolve_model(cache_model)
    steps: dict[str, Callable[[], dict]] = {
        "ttft": lambda: ttft.run(timing, quick),
        "throughput": lambda: throughput.shared_prefix(timing, hf_model(timing_model), quick),
        "no_reuse": lambda: throughput.no_reuse_control(timing, quick),
        "fragmentation": lambda: fragmentation.run(cache, quick),
        "eviction": lambda: eviction.run(cache, quick),
        "hit_rate": lambda: hit_rate.run(cache, quick),
    }
    results: dict[str, Any] = {
        "meta": {"quick": quick, "timing_model": timing_model, "cache_model": cache_model,
                 "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
                 "machine": platform.machine(), "processor": platform.processor() or platform.machine()},
    }
    for name in BENCHMARKS:
        if name not in selected:
            continue
        if progress:
            progress(name)
        start = time.perf_counter()
        results[name] = steps[name]()
        results[name]["wall_s"] = time.perf_counter() - start
        if quick:  # smoke-test sizes: the targets are not judged
            results[name]["passed"] = None
    return results
