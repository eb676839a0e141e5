"""``promptcache engine-bench``: run the local engine's benchmarks, print a table and JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from promptcache.commands.progress import progress_bar
from promptcache.commands.tables import stdout_console
from promptcache.trace.output_path import check_writable_file


@click.command("engine-bench")
@click.option("--quick", is_flag=True,
              help="A smoke test: tiny sizes (seconds), on the tiny model unless --timing-model / --cache-model "
                   "say otherwise. Shows what ran, no timings or speed-ups (meaningless at these sizes; the JSON "
                   "keeps them); only hit / oracle is judged.")
@click.option("--only", multiple=True, metavar="NAMES",
              help="Run only these benchmarks, comma-separated or repeated: ttft, throughput, no_reuse, "
                   "fragmentation, eviction, hit_rate.")
@click.option("--timing-model", type=click.Choice(["embedded", "tiny"]), default=None,
              help="Model of the timing benchmarks (TTFT, throughput, no-reuse control) [default: embedded; "
                   "tiny with --quick].")
@click.option("--cache-model", type=click.Choice(["tiny", "embedded"]), default=None,
              help="Model of the cache-behaviour benchmarks (hit rate, eviction, fragmentation) [default: tiny].")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch.set_num_threads for the run.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Also write the JSON results to this file (its folder must exist).")
def engine_bench(quick: bool, only: tuple[str, ...], timing_model: str | None, cache_model: str | None,
                 threads: int | None,
                 json_path: Path | None) -> None:
    """Benchmark the local engine: TTFT cold vs warm, throughput vs transformers, the no-reuse
    control, KV fragmentation, eviction policies under memory pressure, hit rate vs the oracle.

    The table goes to stderr and the JSON to stdout, so `promptcache engine-bench > bench.json`
    keeps both. The embedded model has random weights: its text is meaningless, but token
    counts, cache behaviour and timings are real. --quick runs both groups on the tiny model,
    unless --timing-model / --cache-model are given: those are honoured (quick sizes, your model).

    Exit codes: 0 done, 2 a usage error (an unknown benchmark, a --json file that cannot be
    written: checked before anything runs).
    """
    if json_path is not None:
        try:
            check_writable_file(json_path)
        except OSError as problem:
            click.echo(f"error: cannot write {json_path}: {problem}", err=True)
            sys.exit(2)
    try:
        import torch

        from local_backend.benchmarks import pick_models, run_benchmarks, select_benchmarks, uses_embedded
        from local_backend.benchmarks.report import detail_tables, summary_table
        from local_backend.embedded import EMBEDDED_NOTICE
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise click.ClickException(f"the engine needs the backend extra ({exc}): pip install 'promptcache[backend]'")
    try:
        selected = select_benchmarks(only)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--only'") from exc
    timing_model, cache_model = pick_models(quick, timing_model, cache_model)
    if threads:
        torch.set_num_threads(threads)
    console = stdout_console(stderr=True)
    if uses_embedded(selected, timing_model, cache_model):
        console.print(f"[dim]{EMBEDDED_NOTICE}[/]")
    with progress_bar(console, "engine-bench", len(selected), unit="benchmarks") as update:
        results = run_benchmarks(quick=quick, only=selected, timing_model=timing_model, cache_model=cache_model,
                                 progress=lambda name, done, total: update(done, total, name))
    console.print(summary_table(results, console))
    console.print(detail_tables(results, console))
    text = json.dumps(results, indent=2)
    sys.stdout.write(text + "\n")  # first: the results survive a --json file that fails after all
    if json_path is not None:
        try:
            json_path.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            click.echo(f"error: cannot write {json_path}: {exc.strerror}; the results are on stdout above", err=True)
            sys.exit(2)
