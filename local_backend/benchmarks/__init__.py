"""Engine benchmarks (``promptcache engine-bench``, ``bench/engine.py``): JSON plus a rich table.

Timing benchmarks (TTFT, throughput, no-reuse control) run on the embedded
default model; cache-behaviour benchmarks (hit rate / oracle, eviction,
fragmentation) on a tiny model with the same vocabulary by default, since hit
counts and block accounting do not depend on the model's width. ``quick=True``
shrinks every benchmark to a smoke run of a few seconds on tiny models: its
figures are not the acceptance figures, so every ``passed`` is None (not judged),
except hit / oracle (:data:`JUDGED_WHEN_QUICK`), whose target does not depend on size.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from typing import Any

import torch

from . import eviction, fragmentation, hit_rate, throughput, ttft
from .models import MODEL_NAMES, hf_model, resolve_model

BENCHMARKS = ("ttft", "throughput", "no_reuse", "fragmentation", "eviction", "hit_rate")
JUDGED_WHEN_QUICK = ("hit_rate",)
"""Benchmarks whose target does not depend on size (hit tokens == oracle tokens): judged in a quick run too."""
TIMING_BENCHMARKS = ("ttft", "throughput", "no_reuse")
"""The benchmarks run on the timing model; the others run on the cache model."""


def select_benchmarks(only: tuple[str, ...] | None) -> tuple[str, ...]:
    """The benchmarks ``only`` names, in :data:`BENCHMARKS` order (all of them for None or ``()``).

    Each item may hold several comma-separated names (``("ttft,hit_rate", "eviction")``); blanks are ignored.

    Raises:
        ValueError: an unknown name; the message names the valid ones.
    """
    names = [name.strip() for item in only or () for name in item.split(",") if name.strip()]
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        listed = ", ".join(repr(name) for name in dict.fromkeys(unknown))
        raise ValueError(f"unknown benchmark {listed}; choose from {', '.join(BENCHMARKS)} (comma-separated or "
                         "repeated)")
    return tuple(name for name in BENCHMARKS if name in names) if names else BENCHMARKS


def pick_models(quick: bool, timing_model: str | None, cache_model: str | None) -> tuple[str, str]:
    """The timing and cache model names: the ones given, else ``"embedded"`` / ``"tiny"`` (``"tiny"`` for both
    in a quick run). A model given explicitly is honoured in a quick run too.

    Raises:
        ValueError: a name other than ``"embedded"`` or ``"tiny"``.
    """
    timing = timing_model or ("tiny" if quick else "embedded")
    cache = cache_model or "tiny"
    for name in (timing, cache):
        if name not in MODEL_NAMES:
            raise ValueError(f"unknown benchmark model {name!r}; use one of {', '.join(MODEL_NAMES)}")
    return timing, cache


def uses_embedded(selected: tuple[str, ...], timing_model: str, cache_model: str) -> bool:
    """Whether a run of ``selected`` on these models runs the embedded model (its random-weights notice applies)."""
    return any((timing_model if name in TIMING_BENCHMARKS else cache_model) == "embedded" for name in selected)


def run_benchmarks(
    quick: bool = False,
    only: tuple[str, ...] | None = None,
    timing_model: str | None = None,
    cache_model: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Run the engine benchmarks and return their results (plain JSON-able values).

    Each benchmark's result has ``target`` and ``passed``: True / False against
    the target, None where nothing is judged (every benchmark of a quick run;
    the eviction benchmark, which reports its hit rates side by side) -- hit / oracle is judged in a quick
    run too.

    Args:
        quick: smoke-test sizes on the tiny model (seconds, not minutes).
        only: names of :data:`BENCHMARKS`, comma-separated or not (see :func:`select_benchmarks`).
        timing_model / cache_model: ``"embedded"`` or ``"tiny"``; None picks as :func:`pick_models` says.
        progress: called with each benchmark's name and how many ran before it, out of how many, before it
            starts, and with ``("done", n, n)`` at the end.

    Raises:
        ValueError: an unknown benchmark or model name.
    """
    selected = select_benchmarks(only)
    timing_model, cache_model = pick_models(quick, timing_model, cache_model)
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
    for done, name in enumerate(selected):
        if progress:
            progress(name, done, len(selected))
        start = time.perf_counter()
        results[name] = steps[name]()
        results[name]["wall_s"] = time.perf_counter() - start
        if quick and name not in JUDGED_WHEN_QUICK:  # smoke-test sizes: these targets are not judged
            results[name]["passed"] = None
    if progress:
        progress("done", len(selected), len(selected))
    return results
