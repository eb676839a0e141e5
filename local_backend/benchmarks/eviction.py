"""Memory pressure: LRU, LFU and priority eviction side by side on a hot/cold workload.

Hot system prompts are reused every round, separated by bursts of one-off long
documents (:func:`local_backend.workloads.hot_cold_mix`). A first run with an
ample pool measures the working set (distinct tokens whose KV existed) and the
oracle hits; then each policy runs with a pool of 25% of the working set (the
full run also tries 10% and 50%).
"""

from __future__ import annotations

from local_backend.engine import LocalEngine
from local_backend.workloads import hot_cold_mix, run_workload


def run(model: object, quick: bool) -> dict:
    """Hit rates of LRU, LFU and priority eviction with pools smaller than the working set.

    Args:
        model: ``LocalEngine``'s ``model`` (None: the embedded model).
        quick: a 3-round hot/cold mix at 25% only; else the full mix at 10%,
            25% and 50% of the working set.

    Returns:
        ``rows`` (per pool fraction and policy: ``num_blocks``, ``hit_tokens``,
        ``hit_rate``, ``hit_over_oracle``, ``evictions``), ``hit_rate_at_25pct``
        per policy, ``working_set_tokens`` and ``oracle_hit_rate``; ``passed``
        is None (reported side by side, no target).
    """
    workload = hot_cold_mix(rounds=3, hot=128, cold=256, question=16) if quick else hot_cold_mix()
    block_size = 16
    ample = run_workload(LocalEngine(model, block_size=block_size, num_blocks=4096), workload)
    working_set = ample.working_set_tokens
    fractions = (0.25,) if quick else (0.10, 0.25, 0.50)
    largest = max(r["prompt_tokens"] for r in ample.requests)
    rows = []
    for fraction in fractions:
        num_blocks = max(-(-int(working_set * fraction) // block_size), -(-largest // block_size) + 1)
        for policy in ("lru", "lfu", "priority"):
            engine = LocalEngine(model, block_size=block_size, num_blocks=num_blocks, eviction=policy)
            result = run_workload(engine, workload)
            rows.append({"pool_fraction": fraction, "num_blocks": num_blocks, "policy": policy,
                         "hit_tokens": result.cached_tokens, "hit_rate": result.hit_rate,
                         "hit_over_oracle": result.cached_tokens / ample.oracle_tokens,
                         "evictions": engine.stats()["kv"]["evictions"]})
    at_25 = {r["policy"]: r["hit_rate"] for r in rows if r["pool_fraction"] == 0.25}
    return {"target": "LRU / LFU / priority hit rates side by side at 25% of the working set",
            "passed": None, "workload": workload.name, "requests": len(workload.requests),
            "working_set_tokens": working_set, "prompt_tokens": ample.prompt_tokens,
            "oracle_hit_rate": ample.oracle_hit_rate, "hit_rate_at_25pct": at_25, "rows": rows}
