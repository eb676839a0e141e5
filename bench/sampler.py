#!/usr/bin/env python3
"""Sampler speed: milliseconds per sampled token on ``[batch, vocab]`` fp32 logits (CPU).

Times :meth:`local_backend.sampler.Sampler.sample` with ``torch.utils.benchmark``
(median of blocked runs) for greedy, temperature, top-p, top-k + top-p and a
seeded top-p request, at batch 1 and 8, on two kinds of logits over the embedded
model's vocabulary (100,266 tokens):

* ``flat``: standard deviation 0.45, like the embedded random-weight model (at
  temperature 0.8 its top-p 0.9 nucleus holds about 76% of the vocabulary);
* ``peaked``: standard deviation 3, closer to a trained model.

A rich table goes to stderr, JSON to stdout. Timings measured while other work
runs on the machine are noisy: compare runs made on an idle machine.

    .venv/bin/python bench/sampler.py > sampler.json
    .venv/bin/python bench/sampler.py --min-run-time 0.2 --batch 1
"""

from __future__ import annotations

import argparse
import json
import platform

import torch
from rich.console import Console
from rich.table import Table
from torch.utils import benchmark

from local_backend.embedded import EMBEDDED_VOCAB
from local_backend.request import Request
from local_backend.sampler import Sampler
from local_backend.sampling_params import SamplingParams

CASES = {
    "greedy": SamplingParams(temperature=0.0),
    "temperature 0.8": SamplingParams(temperature=0.8),
    "top-p 0.9": SamplingParams(temperature=0.8, top_p=0.9),
    "top-k 50, top-p 0.9": SamplingParams(temperature=0.8, top_p=0.9, top_k=50),
    "top-p 0.9, seeded": SamplingParams(temperature=0.8, top_p=0.9, seed=1234),
}
LOGITS_STD = {"flat": 0.45, "peaked": 3.0}


def measure(vocab: int, batches: list[int], min_run_time: float) -> list[dict]:
    """One row per (logits kind, batch, case): ``ms_per_step`` (one ``sample`` call) and ``ms_per_token``."""
    rows = []
    for kind, std in LOGITS_STD.items():
        for batch in batches:
            logits = torch.randn(batch, vocab, generator=torch.Generator().manual_seed(0)) * std
            for case, params in CASES.items():
                requests = [Request(f"r{i}", [1], params, 16, None) for i in range(batch)]
                sampler = Sampler(seed=0)
                timer = benchmark.Timer(stmt="sampler.sample(logits, requests)",
                                        globals={"sampler": sampler, "logits": logits, "requests": requests},
                                        num_threads=torch.get_num_threads())
                median = timer.blocked_autorange(min_run_time=min_run_time).median
                rows.append({"logits": kind, "batch": batch, "case": case, "ms_per_step": median * 1e3,
                             "ms_per_token": median * 1e3 / batch})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=int, default=EMBEDDED_VOCAB, help="vocabulary size (tokens)")
    parser.add_argument("--batch", type=int, action="append", help="batch sizes [default: 1 and 8]")
    parser.add_argument("--min-run-time", type=float, default=1.0, help="seconds per measurement")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = measure(args.vocab, args.batch or [1, 8], args.min_run_time)
    table = Table(title=f"Sampler.sample on \\[batch, {args.vocab:,}] fp32 logits (CPU, {torch.get_num_threads()} "
                        "threads)")
    for column in ("logits", "batch", "case", "ms / step", "ms / token"):
        table.add_column(column, justify="left" if column in ("logits", "case") else "right")
    for row in rows:
        table.add_row(row["logits"], str(row["batch"]), row["case"], f"{row['ms_per_step']:.2f}",
                      f"{row['ms_per_token']:.2f}")
    Console(stderr=True).print(table)
    meta = {"vocab": args.vocab, "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
            "machine": platform.machine()}
    print(json.dumps({"meta": meta, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
