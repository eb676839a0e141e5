"""Hit rate / oracle on the reuse workloads, requests one at a time, pool large enough."""

from __future__ import annotations

from local_backend.engine import LocalEngine
from local_backend.workloads import oracle_workloads, run_workload


def run(model: object, quick: bool) -> dict:
    """Engine hit tokens vs the oracle's on the reuse workloads, one request at a time, ample pool.

    Args:
        model: ``LocalEngine``'s ``model`` (None: the embedded model).
        quick: the workloads at a quarter of their size.

    Returns:
        ``rows`` (per workload: ``prompt_tokens``, ``cached_tokens``,
        ``oracle_tokens``, ``hit_rate``, ``hit_over_oracle``) and ``passed``
        (``hit_over_oracle == 1.0`` on every workload, the issue's target).
    """
    rows = []
    for workload in oracle_workloads(scale=0.25 if quick else 1.0):
        engine = LocalEngine(model, block_size=16, num_blocks=4096)
        rows.append(run_workload(engine, workload).as_dict())
    return {"target": "hit tokens / oracle tokens == 1.0 on every workload",
            "passed": all(r["hit_over_oracle"] == 1.0 for r in rows), "rows": rows}
