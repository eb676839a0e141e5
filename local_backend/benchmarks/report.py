"""Render benchmark results as rich tables (the JSON is the source of truth)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table


def _verdict(passed: bool | None, quick: bool) -> str:
    """The table's word for ``passed``: None is "not judged (quick)" in a quick run, "reported" otherwise."""
    if passed is None:
        return "not judged (quick)" if quick else "reported"
    return "[green]pass[/]" if passed else "[red]FAIL[/]"


def summary_table(results: dict[str, Any]) -> Table:
    """One line per benchmark: the headline figure, the target and the verdict (from ``passed``)."""
    table = Table(title=f"engine-bench ({'quick smoke run' if results['meta']['quick'] else 'full run'}; "
                        f"timing model: {results['meta']['timing_model']}, "
                        f"cache model: {results['meta']['cache_model']})")
    for column in ("benchmark", "result", "target", "verdict"):
        table.add_column(column)
    lines = {
        "ttft": lambda r: (f"cold {r['ttft_cold_s'] * 1000:.0f} ms -> warm {r['ttft_warm_s'] * 1000:.1f} ms: "
                           f"{r['speedup']:.1f}x (ideal {r['ideal_speedup']:.0f}x; {r['cached_tokens']} cached)"),
        "throughput": lambda r: (f"{r['speed_vs_generate_batch']:.2f}x generate_batch, "
                                 f"{r['speed_vs_generate_loop']:.2f}x generate loop"),
        "no_reuse": lambda r: (f"on {r['seconds_caching_on']:.2f} s vs off {r['seconds_caching_off']:.2f} s "
                               f"({r['overhead'] * 100:+.1f}%; median paired {r['median_paired_ratio']:.3f})"),
        "fragmentation": lambda r: (f"peak {r['peak']['internal_fragmentation'] * 100:.2f}% "
                                    f"({r['peak']['running']} running), decode peak "
                                    f"{r['decode_peak']['internal_fragmentation'] * 100:.2f}%, decode mean "
                                    f"{r['decode_fragmentation'] * 100:.2f}%; StaticCache "
                                    f"{r['peak']['static_cache_waste'] * 100:.1f}%"),
        "eviction": lambda r: ", ".join(f"{k} {v * 100:.1f}%" for k, v in r["hit_rate_at_25pct"].items())
                              + f" (oracle {r['oracle_hit_rate'] * 100:.1f}%)",
        "hit_rate": lambda r: ", ".join(f"{row['workload']} {row['hit_over_oracle']:.3f}" for row in r["rows"]),
    }
    quick = results["meta"]["quick"]
    for name, render in lines.items():
        if name in results:
            r = results[name]
            table.add_row(name, render(r), r["target"], _verdict(r["passed"], quick))
    return table


def detail_tables(results: dict[str, Any]) -> Group:
    """Per-row tables: throughput systems, eviction policies, hit-rate workloads, the TTFT sweep."""
    tables = []
    if "throughput" in results:
        t = Table(title="throughput (best of runs)")
        for c in ("system", "seconds", "output tok/s", "total tok/s", "prefill tokens computed"):
            t.add_column(c, justify="right")
        for row in results["throughput"]["rows"]:
            t.add_row(row["system"], f"{row['seconds']:.2f}", f"{row['output_tok_s']:.1f}",
                      f"{row['total_tok_s']:.0f}", str(row["prefill_tokens_computed"] or "-"))
        tables.append(t)
    if "ttft" in results and results["ttft"]["sweep"]:
        t = Table(title="TTFT sweep (prompt tokens, shared tokens)")
        for c in ("prompt", "shared", "cached", "cold ms", "warm ms", "speed-up", "ideal"):
            t.add_column(c, justify="right")
        for row in [*results["ttft"]["sweep"], results["ttft"]]:
            t.add_row(str(row["prompt_tokens"]), str(row["shared_tokens"]), str(row["cached_tokens"]),
                      f"{row['ttft_cold_s'] * 1000:.0f}", f"{row['ttft_warm_s'] * 1000:.1f}",
                      f"{row['speedup']:.1f}x", f"{row['ideal_speedup']:.1f}x")
        tables.append(t)
    if "eviction" in results:
        t = Table(title=f"eviction (working set {results['eviction']['working_set_tokens']} tokens)")
        for c in ("pool", "blocks", "policy", "hit rate", "hit / oracle", "evictions"):
            t.add_column(c, justify="right")
        for row in results["eviction"]["rows"]:
            t.add_row(f"{row['pool_fraction'] * 100:.0f}%", str(row["num_blocks"]), row["policy"],
                      f"{row['hit_rate'] * 100:.1f}%", f"{row['hit_over_oracle']:.3f}", str(row["evictions"]))
        tables.append(t)
    if "hit_rate" in results:
        t = Table(title="hit rate / oracle (one at a time, ample pool)")
        for c in ("workload", "requests", "prompt tokens", "cached", "oracle", "hit rate", "hit / oracle"):
            t.add_column(c, justify="right")
        for row in results["hit_rate"]["rows"]:
            t.add_row(row["workload"], str(row["requests"]), str(row["prompt_tokens"]), str(row["cached_tokens"]),
                      str(row["oracle_tokens"]), f"{row['hit_rate'] * 100:.1f}%", f"{row['hit_over_oracle']:.3f}")
        tables.append(t)
    return Group(*tables)
