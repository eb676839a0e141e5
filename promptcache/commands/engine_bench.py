"""``promptcache engine-bench``: run the local engine's benchmarks, print a table and JSON."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console


@click.command("engine-bench")
@click.option("--quick", is_flag=True, help="Smoke-test sizes on a tiny model (seconds); figures are not judged.")
@click.option("--only", multiple=True, metavar="NAME",
              help="Run only these benchmarks: ttft, throughput, no_reuse, fragmentation, eviction, hit_rate.")
@click.option("--timing-model", type=click.Choice(["embedded", "tiny"]), default="embedded", show_default=True,
              help="Model of the timing benchmarks (TTFT, throughput, no-reuse control).")
@click.option("--cache-model", type=click.Choice(["tiny", "embedded"]), default="tiny", show_default=True,
              help="Model of the cache-behaviour benchmarks (hit rate, eviction, fragmentation).")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch.set_num_threads for the run.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also write the JSON results to this file.")
def engine_bench(quick: bool, only: tuple[str, ...], timing_model: str, cache_model: str, threads: int | None,
                 json_path: str | None) -> None:
    """Benchmark the local engine: TTFT cold vs warm, throughput vs transformers, the no-reuse
    control, KV fragmentation, eviction policies under memory pressure, hit rate vs the oracle.

    The table goes to stderr and the JSON to stdout, so `promptcache engine-bench > bench.json`
    keeps both. The embedded model has random weights: its text is meaningless, but token
    counts, cache behaviour and timings are real.
    """
    try:
        import torch

        from local_backend.benchmarks import run_benchmarks
        from local_backend.benchmarks.report import detail_tables, summary_table
        from local_backend.embedded import EMBEDDED_NOTICE
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise click.ClickException(f"the engine needs the backend extra ({exc}): pip install 'promptcache[backend]'")
    if threads:
        torch.set_num_threads(threads)
    console = Console(stderr=True)
    console.print(f"[dim]{EMBEDDED_NOTICE}[/]")
    try:
        with console.status("running") as status:
            results = run_benchmarks(quick=quick, only=only or None, timing_model=timing_model,
                                     cache_model=cache_model, progress=lambda name: status.update(f"running {name}"))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    console.print(summary_table(results))
    console.print(detail_tables(results))
    text = json.dumps(results, indent=2)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    sys.stdout.write(text + "\n")
