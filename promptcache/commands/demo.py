"""``promptcache demo``: the same app with and without a cache-breaking bug, replayed on the local engine."""

from __future__ import annotations

import time
from importlib import resources

import click
from rich.console import Console

from promptcache.commands.backend import ENGINE_MODULES, check_model_options, loading_model, require_backend
from promptcache.commands.tables import Column, print_table, stdout_console
from promptcache.commands.verify import rate
from promptcache.verify.report import VerifyReport, verify_trace

GOOD_TRACE = "demo_good_support_chat.jsonl"
BAD_TRACE = "demo_bad_timestamp_system.jsonl"


def _trace(name: str):
    return resources.files("promptcache").joinpath("data", "traces", name)


COLUMNS = (Column("index", "#"), Column("session", justify="left", text=True),
           Column("good: cached", "good cached"), Column("TTFT ms", "ms"), Column("bad: cached", "bad cached"),
           Column("TTFT ms", "ms"), Column("bad: miss cause", "bad: cause", justify="left", text=True))


def print_side_by_side(good: VerifyReport, bad: VerifyReport, console: Console) -> None:
    """Per-request cached tokens of both runs next to each other, then each verdict."""
    def cached(r) -> str:
        return f"{r.cached_tokens:,} of {r.prompt_tokens:,}"

    rows = []
    for g, b in zip(good.requests, bad.requests):
        cause = ""
        if b.divergence is not None:
            cause = b.divergence.cause if b.divergence.expected else f"[bold red]{b.divergence.cause}[/bold red]"
        rows.append([str(g.index), g.session, cached(g), f"{(g.ttft_s or 0) * 1000:,.0f}",
                     cached(b), f"{(b.ttft_s or 0) * 1000:,.0f}", cause])
    print_table(console, "the same support app, replayed on the local engine", COLUMNS, rows)
    for label, report in (("good", good), ("bad", bad)):
        s = report.summary()
        ok, verdict = report.verdict()
        style = "bold green" if ok else "bold red"
        computed = s["prompt_tokens"] - s["cached_tokens"]
        console.print(f"[bold]{label}[/bold]: hit rate {rate(s['hit_rate'])} (oracle {rate(s['oracle_hit_rate'])}), "
                      f"{computed:,} prompt tokens computed -> [{style}]{verdict}[/{style}]")
    first_bad = next((r for r in bad.requests if r.divergence is not None and not r.divergence.expected), None)
    if first_bad is not None:
        console.print(f"bad, first unexpected miss (index {first_bad.index}): {first_bad.divergence.summary()}",
                      markup=False)


@click.command("demo")
@click.option("--model", type=click.Path(), default=None,
              help="A local transformers model directory [default: the embedded model].")
@click.option("--tokenizer", default=None, help="'chatml' or a tokenizer directory [default: the model's].")
@click.option("--kv-cache-mb", type=click.FloatRange(min=0, min_open=True), default=256.0, show_default=True,
              help="KV pool size in MiB.")
def demo(model: str | None, tokenizer: str | None, kv_cache_mb: float) -> None:
    """Replay a good and a bad version of one app (bundled traces) on the local engine (the embedded
    model unless --model) and print the side-by-side verdict: real prefix-cache hits, token by token.
    """
    check_model_options(model, tokenizer)  # before torch is imported: a bad path fails in a moment
    require_backend(ENGINE_MODULES, what="promptcache demo")
    from promptcache.verify.backends import LocalBackend

    console = stdout_console()
    started = time.perf_counter()
    with loading_model(console):
        backend = LocalBackend(model=model, tokenizer=tokenizer, kv_cache_mb=kv_cache_mb)
    if backend.notice:
        console.print(f"[dim]{backend.notice}[/dim]")
    reports = []
    for name in (GOOD_TRACE, BAD_TRACE):
        with resources.as_file(_trace(name)) as path, console.status(f"replaying {name}") as status:
            def progress(done: int, total: int, result, status=status, name=name) -> None:
                status.update(f"replaying {name}: {done}/{total}")
            reports.append(verify_trace(path, backend, progress=progress))
        backend.reset_cache()  # the second app starts from a cold cache, like the first
    print_side_by_side(*reports, console)
    console.print(f"[dim]{time.perf_counter() - started:.0f} s; replay your own trace with "
                  "`promptcache verify TRACE.jsonl`[/dim]")
