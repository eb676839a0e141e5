"""Render benchmark results as rich tables that fit the console (the JSON is the source of truth).

A quick run is a smoke test: its sizes are too small for a timing, a speed-up or a fragmentation
percentage to mean anything, so its tables show what ran and the size-independent figures only
(token counts, hit rates, hit / oracle), never a ratio that reads as a verdict. The JSON keeps every
raw figure of both kinds of run.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.text import Text

from promptcache.commands.tables import Column, fit_table

QUICK_NOTE = ("smoke test: every benchmark ran at tiny sizes, to show the engine works end to end. Timings, "
              "speed-ups, the caching overhead and fragmentation at these sizes say nothing about the engine, so "
              "they are neither shown nor judged here (the JSON keeps them); hit / oracle does not depend on "
              "size and is judged. Run `promptcache engine-bench` (minutes) for the judged figures.")


def _verdict(passed: bool | None, quick: bool) -> str:
    """The table's word for ``passed``: None is "ran" in a quick run (a smoke test), "reported" otherwise."""
    if passed is None:
        return "ran" if quick else "reported"
    return "[green]pass[/]" if passed else "[red]FAIL[/]"


_FULL = {
    "ttft": lambda r: (f"cold {r['ttft_cold_s'] * 1000:,.0f} ms -> warm {r['ttft_warm_s'] * 1000:,.1f} ms: "
                       f"{r['speedup']:.1f}x (ideal {r['ideal_speedup']:.0f}x; {r['cached_tokens']:,} cached)"),
    "throughput": lambda r: (f"{r['speed_vs_generate_batch']:.2f}x generate_batch, "
                             f"{r['speed_vs_generate_loop']:.2f}x generate loop"),
    "no_reuse": lambda r: (f"on {r['seconds_caching_on']:.2f} s vs off {r['seconds_caching_off']:.2f} s "
                           f"({r['overhead'] * 100:+.1f}%; median paired {r['median_paired_ratio']:.3f})"),
    "fragmentation": lambda r: (f"peak {r['peak']['internal_fragmentation'] * 100:.2f}% "
                                f"({r['peak']['running']} running), decode peak "
                                f"{r['decode_peak']['internal_fragmentation'] * 100:.2f}%, decode mean "
                                f"{r['decode_fragmentation'] * 100:.2f}%; StaticCache "
                                f"{r['peak']['static_cache_waste'] * 100:.1f}%"),
}


def _eviction(r: dict) -> str:
    return (", ".join(f"{k} {v * 100:.1f}%" for k, v in r["hit_rate_at_25pct"].items())
            + f" (oracle {r['oracle_hit_rate'] * 100:.1f}%)")


def _hit_rate(r: dict) -> str:
    return ", ".join(f"{row['workload']} {row['hit_over_oracle']:.3f}" for row in r["rows"])


def _prefill(r: dict, system: str) -> str:
    return next((f"{row['prefill_tokens_computed']:,}" for row in r["rows"] if row["system"] == system), "-")


_QUICK = {
    "ttft": lambda r: f"{r['prompt_tokens']:,}-token prompt cold, then warm with {r['cached_tokens']:,} cached",
    "throughput": lambda r: (f"{r['prompts']} prompts on the engine, the generate loop and generate_batch; "
                             f"prefill tokens computed: engine {_prefill(r, 'engine')}, generate loop "
                             f"{_prefill(r, 'generate loop')}"),
    "no_reuse": lambda r: f"caching on and off, {r['hit_tokens']:,} hit tokens (nothing shared)",
    "fragmentation": lambda r: (f"{r['requests']} requests, peak {r['peak']['running']} running in "
                                f"{r['peak']['blocks_used']:,} blocks"),
}


def summary_table(results: dict[str, Any], console: Console) -> RenderableType:
    """One line per benchmark: the headline figure, the target and the verdict (from ``passed``); a quick run
    shows what ran instead of timings and ratios, under a smoke-test title and note."""
    meta = results["meta"]
    quick = meta["quick"]
    lines = {**(_QUICK if quick else _FULL), "eviction": _eviction, "hit_rate": _hit_rate}
    models = f"timing model {meta['timing_model']}, cache model {meta['cache_model']}"
    if quick:
        title = f"engine-bench --quick: a smoke test ({models})"
        columns = (Column("benchmark", justify="left"), Column("what ran", justify="left", text=True),
                   Column("verdict", justify="left"))
        rows = [[name, lines[name](results[name]), _verdict(results[name]["passed"], quick)]
                for name in lines if name in results]
        return Group(fit_table(console, title, columns, rows), Text(QUICK_NOTE, style="dim"))
    columns = (Column("benchmark", justify="left"), Column("result", justify="left", text=True),
               Column("target", justify="left", text=True), Column("verdict", justify="left"))
    rows = [[name, lines[name](results[name]), results[name]["target"], _verdict(results[name]["passed"], quick)]
            for name in lines if name in results]
    return fit_table(console, f"engine-bench (full run; {models})", columns, rows)


def detail_tables(results: dict[str, Any], console: Console) -> Group:
    """Per-row tables: throughput systems, eviction policies, hit-rate workloads, the TTFT sweep (a quick run:
    no seconds, rates or speed-ups, only the counts)."""
    quick = results["meta"]["quick"]
    tables = []
    if "throughput" in results:
        rows = results["throughput"]["rows"]
        if quick:
            columns = (Column("system", justify="left"), Column("output tokens", "output"),
                       Column("prefill tokens computed", "prefill computed"))
            cells = [[row["system"], f"{row['output_tokens']:,}", _count(row["prefill_tokens_computed"])]
                     for row in rows]
            tables.append(fit_table(console, "throughput (counts only: smoke sizes)", columns, cells))
        else:
            columns = (Column("system", justify="left"), Column("seconds", "s"), Column("output tok/s", "out tok/s"),
                       Column("total tok/s", "tok/s"), Column("prefill tokens computed", "prefill"))
            cells = [[row["system"], f"{row['seconds']:.2f}", f"{row['output_tok_s']:,.1f}",
                      f"{row['total_tok_s']:,.0f}", _count(row["prefill_tokens_computed"])] for row in rows]
            tables.append(fit_table(console, "throughput (best of runs)", columns, cells))
    if "ttft" in results and results["ttft"]["sweep"]:
        columns = (Column("prompt"), Column("shared"), Column("cached"), Column("cold ms", "cold"),
                   Column("warm ms", "warm"), Column("speed-up", "x"), Column("ideal"))
        cells = [[f"{row['prompt_tokens']:,}", f"{row['shared_tokens']:,}", f"{row['cached_tokens']:,}",
                  f"{row['ttft_cold_s'] * 1000:,.0f}", f"{row['ttft_warm_s'] * 1000:,.1f}",
                  f"{row['speedup']:.1f}x", f"{row['ideal_speedup']:.1f}x"]
                 for row in [*results["ttft"]["sweep"], results["ttft"]]]
        tables.append(fit_table(console, "TTFT sweep (prompt tokens, shared tokens)", columns, cells))
    if "eviction" in results:
        columns = (Column("pool"), Column("blocks"), Column("policy", justify="left"), Column("hit rate", "hit"),
                   Column("hit / oracle", "/ oracle"), Column("evictions", "evicted"))
        cells = [[f"{row['pool_fraction'] * 100:.0f}%", f"{row['num_blocks']:,}", row["policy"],
                  f"{row['hit_rate'] * 100:.1f}%", f"{row['hit_over_oracle']:.3f}", f"{row['evictions']:,}"]
                 for row in results["eviction"]["rows"]]
        title = f"eviction (working set {results['eviction']['working_set_tokens']:,} tokens)"
        tables.append(fit_table(console, title, columns, cells))
    if "hit_rate" in results:
        columns = (Column("workload", justify="left"), Column("requests", "req."), Column("prompt tokens", "prompt"),
                   Column("cached"), Column("oracle"), Column("hit rate", "hit"), Column("hit / oracle", "/ oracle"))
        cells = [[row["workload"], f"{row['requests']:,}", f"{row['prompt_tokens']:,}", f"{row['cached_tokens']:,}",
                  f"{row['oracle_tokens']:,}", f"{row['hit_rate'] * 100:.1f}%", f"{row['hit_over_oracle']:.3f}"]
                 for row in results["hit_rate"]["rows"]]
        tables.append(fit_table(console, "hit rate / oracle (one at a time, ample pool)", columns, cells))
    return Group(*tables)


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
