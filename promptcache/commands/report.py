"""``promptcache report``: one self-contained HTML page of a trace's prompt-cache behaviour.

By default the numbers are ``simulate``'s (the provider's cache, offline, with costs): what a user
who pays a provider expects. ``--backend local`` (or a server URL) shows ``verify``'s instead: a
replay on a real prefix cache, with its measured hits and the tokens it computed. ``verify --html``
and ``simulate --html`` write the same page from their own run, with all their options.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import click
from rich.console import Console

from promptcache.commands.options import (AS_OF, STRICT_ADVICE, print_warnings,
                                         skipped_lines, warn_then_exit_on_error, writable_file)
from promptcache.commands.backend import engine_option
from promptcache.commands.tables import stdout_console
from promptcache.providers.profiles import PROVIDERS
from promptcache.providers.userfile import ProvidersFileError, use_user_rules
from promptcache.trace.records import TraceFormatError


def save_report(report, path: Path, err: Console) -> None:  # a CacheReport; typed loosely to stay import-light
    """Write ``report`` to ``path`` and say so on ``err``; exit 2 when the file cannot be written."""
    from promptcache.report import write_html

    try:
        write_html(report, path)
    except OSError as exc:
        err.print(f"error: cannot write the report: {exc}", markup=False)
        sys.exit(2)
    err.print(f"report written to {path} ({report.headline}; hit rate "
              f"{'n/a' if report.hit_rate is None else format(report.hit_rate, '.1%')})", markup=False)


def _simulated(trace: Path, strict: bool, provider, model, as_of, unit, err: Console):
    from promptcache.report import from_simulation
    from promptcache.simulate import simulate_trace

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            simulation, error = simulate_trace(trace, strict=strict, provider=provider, model=model, as_of=as_of,
                                               unit=unit), None
        except TraceFormatError as exc:
            simulation, error = None, f"{exc} {STRICT_ADVICE}"
        except ValueError as exc:  # also EmptyTraceError
            simulation, error = None, str(exc)
    warn_then_exit_on_error(caught, err, error)
    return from_simulation(simulation, str(trace), skipped=skipped_lines(caught))


def _replayed(trace: Path, strict: bool, backend: str, model, tokenizer, block_size: int | None, api_key,
              engine_name: str | None, err: Console):
    from promptcache.commands.backend import ENGINE_MODULES, check_model_options, opening_backend, require_backend
    from promptcache.report import from_verify
    from promptcache.commands.verify import read_records

    local = backend == "local"
    if local:
        require_backend(ENGINE_MODULES, what="promptcache report --backend local")
    records, skipped = read_records(trace, strict, err)
    if local:
        check_model_options(model, tokenizer)
    from promptcache.verify.backends import BackendError, make_backend
    from promptcache.verify.report import verify_trace

    with opening_backend(backend, err):
        engine = make_backend(backend, model=model, max_tokens=1, block_size=block_size, api_key=api_key,
                              engine=engine_name, kv_cache_mb=None, num_blocks=None, eviction="lru", tokenizer=tokenizer)
    with warnings.catch_warnings(record=True) as caught, err.status(f"replaying {len(records)} requests"):
        warnings.simplefilter("always")
        try:
            report = verify_trace(records, engine, name=str(trace))
        except BackendError as exc:
            err.print(f"error: cannot use backend {backend}: {exc}", markup=False)
            sys.exit(2)
        finally:
            engine.close()
    print_warnings(caught, err)
    return from_verify(report, skipped=skipped)


@click.command("report")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), callback=writable_file,
              help="The HTML file to write [default: TRACE's name with .html, in the current directory].")
@click.option("--backend", default=None, metavar="local|URL",
              help="Show a replay on this prefix-caching backend ('local' engine or an OpenAI-compatible server "
                   "URL, as `verify`) instead of the provider's simulated cache.")
@click.option("--provider", type=click.Choice(PROVIDERS), help="Simulation: whose cache rules [default: from the model].")
@click.option("--model", help="Simulation: the provider model; --backend: the model (local directory or served name).")
@click.option("--as-of", type=AS_OF, help="Simulation: apply the rules in force on this date (YYYY-MM-DD).")
@click.option("--unit", type=click.Choice(["USD", "relative"]), help="Simulation: cost unit [default: USD when priced].")
@click.option("--tokenizer", help="--backend local: 'chatml' or a tokenizer directory [default: the model's].")
@click.option("--block-size", type=click.IntRange(min=1), default=None,
              help="--backend: KV block size in tokens [local: 16; URL: read from the server, else its engine's "
                   "default, as for verify].")
@engine_option
@click.option("--strict", is_flag=True, help="Fail on a malformed trace line instead of skipping it.")
@click.option("--api-key", envvar="OPENAI_API_KEY", show_envvar=True, default=None,
              help="--backend URL: the bearer token of a server started with --api-key.")
@click.option("--providers", "rules_file", type=click.Path(dir_okay=False, path_type=str),
              help="Simulation: a rules file that overrides or adds models, as for simulate [default: "
                   "[tool.promptcache.providers] in pyproject.toml, if any].")
def report(trace, output, backend, provider, model, as_of, unit, tokenizer, block_size, engine, strict, api_key,
           rules_file):
    """Write an HTML report of TRACE's prompt-cache behaviour: per request a bar of cached / written /
    uncached prompt tokens with the oracle's best, the session and the miss cause; click a request for
    its first divergence. At the top: the hit rate, the cost with and without caching, the top causes.

    The numbers are simulate's (the provider's cache, offline) unless --backend is given; then they
    are verify's (a replay on a real prefix cache). The page loads nothing from the network.

    Exit codes: 0 written, 2 a usage error, a trace with no usable request, an unusable backend or an
    unwritable file.
    """
    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    if backend is None:
        if block_size is not None or tokenizer or engine:
            raise click.UsageError("--block-size, --tokenizer and --engine need --backend (a simulation uses the "
                                   "provider's rules)")
        try:
            use_user_rules(rules_file)
        except ProvidersFileError as exc:
            err.print(f"error: {exc}", markup=False)
            sys.exit(2)
        data = _simulated(trace, strict, provider, model, as_of, unit, err)
    else:
        if provider or as_of or unit or rules_file:
            raise click.UsageError("--provider, --as-of, --unit and --providers are for a simulation; drop them "
                                   "with --backend")
        data = _replayed(trace, strict, backend, model, tokenizer, block_size, api_key, engine, err)
    for note in data.notes:  # a backend's "warning: ..." keeps its word, as in verify
        err.print(note if note.startswith("warning: ") else f"note: {note}", markup=False)
    save_report(data, output or Path(trace.stem + ".html"), err)
