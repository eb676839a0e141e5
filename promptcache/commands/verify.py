"""``promptcache verify``: replay a trace on a real prefix cache; per-request hits vs the oracle, and why misses
happen."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from promptcache.commands.backend import (ENGINE_MODULES, check_model_options, engine_option, opening_backend,
                                          require_backend)
from promptcache.commands.progress import progress_bar
from promptcache.commands.tables import Column, print_table, stdout_console
from promptcache.commands.options import (HIT_RATE, STRICT_ADVICE, gate,
                                         print_warnings, skipped_lines, warn_then_exit_on_error, writable_file)
from promptcache.trace.requests import read_requests
from promptcache.trace.records import EmptyTraceError, TraceFormatError, TraceRecord
from promptcache.verify.backends import BackendError, make_backend
from promptcache.verify.report import RequestResult, VerifyReport, verify_trace

EXIT_GATE, EXIT_ERROR = 1, 2


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.0f}"


def rate(value: float | None, spec: str = ".1%") -> str:
    """``value`` formatted with ``spec``, or ``"n/a"`` when it could not be measured (None)."""
    return "n/a" if value is None else format(value, spec)


COLUMNS = (Column("index", "#"), Column("t (s)", "t"), Column("session", justify="left", text=True),
           Column("prompt"), Column("cached"), Column("oracle"), Column("hit"), Column("TTFT ms", "TTFT"),
           Column("miss cause", "cause", justify="left", text=True))


def print_report(report: VerifyReport, console: Console) -> None:
    """The per-request table, the summary line, the worst requests with their first divergence."""
    rows = []
    for r in report.requests:
        if r.error:
            rows.append([str(r.index), f"{r.t:.1f}", r.session, *["-"] * 5, f"[red]error: {r.error}[/red]"])
            continue
        d = r.divergence
        cause = ""
        if d is not None:
            cause = d.cause if d.expected else f"[bold red]{d.cause}[/bold red]"
            if not d.expected and d.path:
                cause += f" [dim]({d.path})[/dim]"
        hit = f"{r.cached_tokens / r.prompt_tokens:.0%}" if r.prompt_tokens else "-"
        short = r.cached_tokens < r.oracle_tokens
        rows.append([str(r.index), f"{r.t:.1f}", r.session, f"{r.prompt_tokens:,}",
                     f"[yellow]{r.cached_tokens:,}[/yellow]" if short else f"{r.cached_tokens:,}",
                     f"{r.oracle_tokens:,}", hit, _ms(r.ttft_s), cause])
    print_table(console, f"{report.trace} on {report.backend} ({report.model}, {report.block_size}-token blocks)",
                COLUMNS, rows)
    s = report.summary()
    oracle = "" if report.oracle_exact else " [yellow](approximate oracle)[/yellow]"
    console.print(f"[bold]{s['requests']} requests[/bold], {s['prompt_tokens']:,} prompt tokens: "
                  f"hit rate [bold]{rate(s['hit_rate'])}[/bold], oracle {rate(s['oracle_hit_rate'])}{oracle}, "
                  f"hit / oracle [bold]{rate(s['hit_vs_oracle'], '.3f')}[/bold], {s['tokens_saved']:,} prefill "
                  "tokens saved"
                  + (f", TTFT p50 {_ms(s['ttft_p50_s'])} ms" if s["ttft_p50_s"] is not None else ""))
    style = "bold green" if s["good"] else "bold red"
    console.print(f"verdict: [{style}]{s['verdict']}[/{style}]")
    worst = [r for r in report.worst() if r.divergence is not None and not r.divergence.expected]
    if worst:
        console.print("[bold]worst requests[/bold] (tokens computed, first divergence from the earlier request "
                      "sharing the longest prefix):")
        for r in worst:  # indented as a block: a wrapped line stays under its request
            console.print(Padding(Text(f"index {r.index} ({r.session}): {r.missed_tokens:,} tokens computed; "
                                       f"{r.divergence.summary()}"), (0, 0, 0, 2), expand=False))
    for note in report.notes:  # a backend's "warning: ..." (an --engine the server contradicts) keeps its word
        console.print(f"[dim]{'' if note.startswith('warning: ') else 'note: '}{note}[/dim]")


def read_records(trace: Path, strict: bool, err: Console) -> tuple[list[TraceRecord], list[str]]:
    """The trace's usable records (as simulate and diff read them) and the messages of the lines and bodies
    skipped (printed as warnings); exit 2 on a malformed line or body under --strict, or when no usable request
    is left."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            records, error = read_requests(trace, strict=strict, model_given=True), None
        except TraceFormatError as exc:
            records, error = [], f"{exc} {STRICT_ADVICE}"
        except EmptyTraceError as exc:
            records, error = [], str(exc)
    warn_then_exit_on_error(caught, err, error)
    return records, skipped_lines(caught)


@click.command("verify")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--backend", default="local", show_default=True,
              help="'local' (in-process engine) or the URL of an OpenAI-compatible server "
                   "(promptcache serve, vLLM, SGLang, llama.cpp, any other).")
@click.option("--model", default=None,
              help="local: a transformers model directory [default: the embedded model]; "
                   "URL: the model name to send [default: the first of /v1/models].")
@click.option("--tokenizer", default=None, help="local: 'chatml' or a tokenizer directory [default: the model's].")
@click.option("--max-tokens", type=click.IntRange(min=1), default=1, show_default=True,
              help="Output tokens per request (the recorded assistant turns stay as they are).")
@click.option("--block-size", type=click.IntRange(min=1), default=None,
              help="KV block size in tokens [local: 16; URL: read from the server, else its engine's default: "
                   "1 for llama.cpp, 16 for vLLM], for the oracle's rounding.")
@click.option("--kv-cache-mb", type=click.FloatRange(min=0, min_open=True), default=None,
              help="local: KV pool size in MiB [default: 1024].")
@click.option("--num-blocks", type=click.IntRange(min=1), default=None, help="local: KV pool size in blocks.")
@click.option("--eviction", type=click.Choice(["lru", "lfu", "priority"]), default="lru", show_default=True)
@click.option("--api-key", envvar="OPENAI_API_KEY", show_envvar=True, default=None,
              help="URL: the bearer token of a server started with --api-key.")
@click.option("--min-hit-rate", "threshold", type=HIT_RATE,
              help="Exit 1 when the hit rate is below this (a CI gate): a fraction in 0..1 (0.8) or a "
                   "percentage (80%); a bare number above 1 is refused.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--reset-cache", is_flag=True,
              help="URL: empty the server's prefix cache first (promptcache serve, vLLM, SGLang; llama.cpp and "
                   "other servers have no such route: restart them), so hits come from this replay only.")
@click.option("--strict", is_flag=True, help="Fail on a malformed trace line instead of skipping it.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), callback=writable_file,
              help="Also write the replay as a self-contained HTML report to this file (see `promptcache report`).")
# engines we did not write (issue 16): which one, and whether refused requests may pass
@engine_option
@click.option("--allow-failures", is_flag=True,
              help="Exit 0 although some requests failed (they are still listed under 'failed').")
def verify(trace, backend, model, tokenizer, max_tokens, block_size, kv_cache_mb, num_blocks, eviction, api_key,
           threshold, output_format, reset_cache, strict, html_path, engine, allow_failures):
    """Replay TRACE (JSON Lines of requests) in order on a prefix-caching backend and report, per
    request, the cached tokens, the best possible (oracle) and the first divergence of every miss.

    Exit codes: 0 done, 1 hit rate below --min-hit-rate, 2 a usage error, a trace with no usable
    request, an unusable backend, or failed requests (unless --allow-failures; always when every
    request failed or --min-hit-rate is set).
    """
    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    local = backend == "local"
    if local:  # a missing extra is named first, whatever the trace holds
        require_backend(ENGINE_MODULES, what="promptcache verify --backend local")
    records, skipped = read_records(trace, strict, err)  # before the backend loads: a bad trace fails in a moment
    if local:
        check_model_options(model, tokenizer)  # before any weights are read: a bad path fails in a moment too
    with opening_backend(backend, err):
        engine = make_backend(backend, model=model, max_tokens=max_tokens, block_size=block_size, api_key=api_key,
                              engine=engine, kv_cache_mb=kv_cache_mb, num_blocks=num_blocks, eviction=eviction, tokenizer=tokenizer)
    with warnings.catch_warnings(record=True) as caught, replay_progress(err, len(records)) as progress:
        warnings.simplefilter("always")
        try:
            report = verify_trace(records, engine, reset_cache=reset_cache, progress=progress, name=str(trace))
        except BackendError as exc:
            err.print(f"error: cannot use backend {backend}: {exc}", markup=False)
            sys.exit(EXIT_ERROR)
        finally:
            engine.close()
    print_warnings(caught, err)
    if html_path is not None:
        from promptcache.commands.report import save_report
        from promptcache.report import from_verify

        save_report(from_verify(report, skipped=skipped), html_path, err)
    code, problem = report.outcome(threshold, allow_failures)
    if output_format == "json":
        document = report.to_dict()
        if threshold is not None:  # passed: every request measured and the hit rate at least the threshold
            document["summary"]["gate"] = gate(threshold, code == 0)
        click.echo(json.dumps(document, indent=2, allow_nan=False))
    else:
        if engine.notice:
            err.print(f"[dim]{engine.notice}[/dim]")
        print_report(report, stdout_console())
    if problem is not None:
        err.print(problem if code == EXIT_GATE else f"error: {problem}", markup=False)
        sys.exit(code)


@contextmanager
def replay_progress(err: Console, total: int | None = None) -> Iterator[Callable[[int, int, RequestResult], None]]:
    """A transient progress bar on ``err`` when it is a terminal (requests done / ``total``, ETA); yields the
    ``progress`` callback of :func:`verify_trace`."""
    with progress_bar(err, "replaying", total, unit="requests") as update:
        def progress(done: int, total: int, result: RequestResult) -> None:
            update(done, total, f"{result.session}: {result.cached_tokens:,}/{result.prompt_tokens:,} cached")
        yield progress
