"""Timing helpers of the engine benchmarks: best-of-N wall time and a cold prefix cache."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from local_backend.engine import LocalEngine


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` ``repeats`` times; return the fastest wall time in seconds and that run's result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - start
        if elapsed < best:
            best, result = elapsed, value
    return best, result


def cold_cache(engine: LocalEngine) -> None:
    """Empty the engine's prefix cache before a cold run.

    Raises:
        RuntimeError: the engine refused (requests still hold blocks), so a
            "cold" figure would really be warm.
    """
    if not engine.reset_prefix_cache():
        raise RuntimeError("cannot reset the prefix cache for a cold run: requests still hold KV blocks")
