"""``promptcache simulate``: what a provider's prompt cache would do with a trace, offline."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from promptcache.commands.progress import progress_bar
from promptcache.commands.tables import Column, stdout_console
from promptcache.commands.tables import print_table as print_fitted
from promptcache.commands.options import (AS_OF, HIT_RATE, STRICT_ADVICE,
                                         gate, skipped_lines, warn_then_exit_on_error, writable_file)
from promptcache.misses.causes import EXPECTED_CAUSES
from promptcache.providers.datafile import warn_if_stale
from promptcache.providers.profiles import PROVIDERS, check_overrides
from promptcache.providers.userfile import ProvidersFileError, use_user_rules
from promptcache.simulate import Simulation, simulate_trace
from promptcache.simulate.calibrate import BLOCK_TOKENS, DISAGREEING, DISAGREES, EXACT, REFUSED, Calibration
from promptcache.simulate.calibrate import check_usage as check_usage_of
from promptcache.trace.records import TraceFormatError
from promptcache.providers.usage import Cost

EXIT_GATE = 1
PROGRESS_FROM = 200
"""Traces of at least this many requests get a progress bar on a terminal (smaller ones take a moment)."""
_BENIGN = tuple(cause.value for cause in EXPECTED_CAUSES)


def _rules(values: tuple[str, ...]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in values:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: use NAME=VALUE, e.g. breakpoint_lookback=50")
        try:
            out[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[name.strip()] = raw
    try:
        return check_overrides(out)  # up front: exit 2 before reading the trace
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--rule'") from None


RELATIVE_UNIT = "base-input tokens"
"""How the ``relative`` cost unit is named (one uncached input token = 1)."""


def _money(value: float, unit: str) -> str:
    """A table cell: ``$0.0225``, or a bare number whose unit the column header names."""
    return f"${value:,.4f}" if unit == "USD" else f"{value:,.0f}"


def _amount(value: float, unit: str) -> str:
    """An amount in running text, with its unit: ``$0.0225`` or ``5,577 base-input tokens``."""
    return _money(value, unit) if unit == "USD" else f"{value:,.0f} {RELATIVE_UNIT}"


def cost_header(unit: str) -> str:
    """The cost column's header: ``cost`` in USD (the cells carry ``$``), else ``cost (base-input tokens)``."""
    return "cost" if unit == "USD" else f"cost ({RELATIVE_UNIT})"


def cost_comparison(cost: Cost) -> str:
    """The input cost with caching against without, in words: ``"input cost $0.0225 with caching vs $0.0500
    without (0.45x, savings $0.0275)"``, or when cache writes cost more than the reads save, ``"... without:
    caching costs $0.0625 more (1.25x)"`` (never a negative saving; the JSON keeps the signed ``savings``)."""
    text = f"input cost {_amount(cost.with_cache, cost.unit)} with caching vs {_amount(cost.without_cache, cost.unit)}"
    text += " without"
    if cost.savings < 0:
        return f"{text}: caching costs {_amount(-cost.savings, cost.unit)} more ({cost.ratio:.2f}x)"
    return f"{text} ({cost.ratio:.2f}x, savings {_amount(cost.savings, cost.unit)})"


def print_table(simulation: Simulation, console: Console) -> None:
    """The per-request table, per-group totals and the summary."""
    unit = simulation.cost_unit
    columns = (Column("#"), Column("t (s)", "t"), Column("session", justify="left", text=True), Column("prompt"),
               Column("read"), Column("write"), Column("uncached", "uncach."), Column("hit"),
               Column(cost_header(unit), "cost" if unit == "USD" else "cost (rel.)"),
               Column("miss cause", "cause", justify="left", text=True))
    rows = []
    for r in simulation.requests:
        hit = f"{r.usage.hit_rate:.0%}" if not r.error else "-"
        cause = "[red]refused[/red]" if r.error else (r.miss_cause or "")
        if r.miss_cause in _BENIGN and not r.expected:  # a new turn with static content after it
            cause = f"[bold red]{cause}, unexpected[/bold red]"
        if r.miss_cause and r.divergence is not None and r.divergence.path:
            cause += f" [dim]({r.divergence.path})[/dim]"
        rows.append([str(r.index), f"{r.t:.1f}", r.session, f"{r.prompt_tokens:,}", f"{r.usage.cache_read:,}",
                     f"{r.usage.cache_write:,}", f"{r.usage.uncached:,}", hit,
                     _money(simulation.cost(r).with_cache, unit), cause])
    print_fitted(console, f"{simulation.provider} prompt cache, {simulation.model}", columns, rows)
    for title, key in (("by prompt_cache_key", lambda r: r.cache_key or "(none)"), ("by session", lambda r: r.session)):
        groups = simulation.groups(key)
        if title.endswith("key") and not any(r.cache_key for r in simulation.requests):
            continue
        if not 1 < len(groups) <= 30:
            continue
        name = title.split()[-1]
        columns = (Column(name, justify="left", text=True), Column("requests", "req."), Column("prompt"),
                   Column("hit rate", "hit"), Column("write rate", "write"),
                   Column(cost_header(unit), "cost" if unit == "USD" else "cost (rel.)"),
                   Column("vs uncached", "vs uncach."))
        rows = [[name, str(usage.requests), f"{usage.prompt_tokens:,}", f"{usage.hit_rate:.1%}",
                 f"{usage.write_rate:.1%}", _money(cost.with_cache, unit), f"{cost.ratio:.2f}x"]
                for name, (usage, cost) in groups.items()]
        print_fitted(console, title, columns, rows)
    usage, cost = simulation.totals()
    errors = sum(1 for r in simulation.requests if r.error)
    unexpected = sum(1 for r in simulation.requests if not r.expected and not r.error)
    console.print(
        f"[bold]{len(simulation.requests)} request{'' if len(simulation.requests) == 1 else 's'}[/bold]"
        + (f" ({errors} refused by the API)" if errors else "")
        + (f", [bold red]{unexpected} unexpected miss{'es' if unexpected > 1 else ''}[/bold red]" if unexpected else "")
        + f": hit rate [bold]{usage.hit_rate:.1%}[/bold], written {usage.write_rate:.1%}; {cost_comparison(cost)}")
    for r in simulation.requests:  # under the table, in full: a table cell would cut or fold it
        if r.error:
            console.print(f"[red]refused: request {r.index}:[/red] {escape(r.error)}")
    for note in simulation.notes:
        console.print(f"[dim]note: {note}[/dim]")


def print_calibration(calibration: Calibration, console: Console) -> None:
    """``--check-usage``: simulated against recorded read / write per request, then the agreement summary."""
    columns = (Column("#"), Column("session", justify="left", text=True), Column("read sim"), Column("read rec"),
               Column("write sim"), Column("write rec"), Column("agreement", justify="left", text=True))
    rows = []
    for c in calibration.checks:
        scaled = "*" if c.scale != 1.0 else ""
        if c.verdict == EXACT:
            agreement = "[green]exact[/green]"
        elif c.verdict == DISAGREES:
            agreement = "[bold red]disagrees[/bold red]"
        elif c.verdict == REFUSED:
            agreement = "[bold red]served, rules refuse[/bold red]"
        else:
            agreement = f"within {calibration.tolerance:,}"
        read, write = ("-", "-") if c.verdict == REFUSED else (f"{c.predicted_read:,}{scaled}",
                                                                 f"{c.predicted_write:,}{scaled}")
        rows.append([str(c.index), escape(c.session), read, f"{c.recorded.cache_read:,}", write,
                     f"{c.recorded.cache_write:,}", agreement])
    print_fitted(console, "simulated vs recorded usage (tokens)", columns, rows)
    disagree = calibration.count(*DISAGREEING)
    style = "bold red" if disagree else "bold"
    console.print(f"[{style}]{calibration.summary()}[/{style}]")
    if calibration.scaled:
        console.print(f"[dim]* {calibration.scaled} simulated count(s) scaled to the recorded prompt size "
                      f"(the simulator's tokenizer counts the prompt differently)[/dim]")
    for c in calibration.checks:
        if c.verdict == REFUSED:
            console.print(f"[red]disagrees: request {c.index}: the provider served a request the rules refuse:"
                          f"[/red] {escape(c.refusal or '')}")
    for index, reason in calibration.unchecked:
        console.print(f"[dim]not checked: request {index}: {reason}[/dim]")
    if disagree:
        console.print("[dim]A disagreement means the provider no longer behaves as providers.toml says (a rule "
                      "or a minimum changed) or the trace is not what was sent: see docs/simulate.md, "
                      "'Checking the rules against recorded usage'.[/dim]")


@click.command("simulate")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--provider", type=click.Choice(PROVIDERS), help="Whose cache rules [default: from the model, else the trace's API].")
@click.option("--model", help="Simulate every request as this model [default: each body's model].")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--min-hit-rate", "threshold", type=HIT_RATE,
              help="Exit 1 when the trace's hit rate is below this: a fraction in 0..1 (0.8) or a percentage "
                   "(80%); a bare number above 1 is refused.")
@click.option("--strict", is_flag=True, help="Fail on a malformed trace line instead of skipping it.")
@click.option("--as-of", type=AS_OF, help="Apply the rules in force on this date (YYYY-MM-DD).")
@click.option("--rule", "rules", multiple=True, metavar="NAME=VALUE",
              help="Override a disputed rule, e.g. breakpoint_lookback=50, min_cacheable_tokens=2048, unit_rule=fixed.")
@click.option("--unit", type=click.Choice(["USD", "relative"]), help="Cost unit [default: USD when the model has a price].")
@click.option("--no-auto-cache", is_flag=True, help="Do not add automatic caching to OpenAI bodies converted for Anthropic.")
@click.option("--providers", "rules_file", type=click.Path(dir_okay=False, path_type=str),
              help="A rules file (providers.toml layout) that overrides or adds models [default: "
                   "[tool.promptcache.providers] in pyproject.toml, if any]; see `promptcache providers`.")
@click.option("--check-usage", is_flag=True,
              help="Compare each request's simulated cache read / write with the usage recorded in the trace "
                   "(promptcache.wrap, promptcache proxy) and print the agreement.")
@click.option("--usage-tolerance", type=click.IntRange(min=0), default=BLOCK_TOKENS, show_default=True,
              metavar="TOKENS", help="With --check-usage: tokens a read or write may differ by and still agree "
                                     "(default: 1 block).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), callback=writable_file,
              help="Also write the simulation as a self-contained HTML report to this file (see `promptcache report`).")
def simulate(trace, provider, model, output_format, threshold, strict, as_of, rules, unit, no_auto_cache, rules_file,
             check_usage, usage_tolerance, html_path):
    """Simulate a provider's prompt cache on TRACE (JSON Lines of requests): per-request reads,
    writes, cost and miss cause, offline.

    Exit codes: 0 done, 1 hit rate below --min-hit-rate, 2 a usage error, a trace with
    no usable request, or (with --strict) a malformed trace line.
    """
    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    if usage_tolerance != BLOCK_TOKENS and not check_usage:
        raise click.UsageError("--usage-tolerance needs --check-usage (it sets how far a simulated read or write "
                               "may be off the recorded one)")
    overrides = _rules(rules)  # before the bar: a bad --rule is a usage error at once
    with warnings.catch_warnings(record=True) as caught, \
            progress_bar(err, "simulating", unit="requests", at_least=PROGRESS_FROM) as update:
        warnings.simplefilter("always")
        try:
            use_user_rules(rules_file)
            warn_if_stale()
            simulation = simulate_trace(trace, strict=strict, provider=provider, model=model, as_of=as_of,
                                        overrides=overrides, unit=unit, auto_cache=not no_auto_cache,
                                        progress=update)
        except ProvidersFileError as exc:
            error = str(exc)
        except TraceFormatError as exc:
            error = f"{exc} {STRICT_ADVICE}"
        except ValueError as exc:  # also EmptyTraceError: no usable request in the trace
            error = str(exc)
        else:
            error = None
            warn_if_stale(dated={r.profile.model: r.profile.values_date() for r in simulation.requests})
        calibration = None
        if error is None and check_usage:
            try:
                calibration = check_usage_of(simulation, tolerance=usage_tolerance)
            except ValueError as exc:
                error = str(exc)
    warn_then_exit_on_error(caught, err, error)
    if html_path is not None:
        from promptcache.commands.report import save_report
        from promptcache.report import from_simulation

        save_report(from_simulation(simulation, str(trace), skipped=skipped_lines(caught)), html_path, err)
    hit_rate = simulation.summary()["hit_rate"]
    if output_format == "json":
        document = simulation.to_dict()
        if threshold is not None:
            document["summary"]["gate"] = gate(threshold, hit_rate >= threshold)
        if calibration is not None:
            document["usage_check"] = calibration.to_dict()
        click.echo(json.dumps(document, indent=2))
        for note in simulation.notes:
            err.print(f"note: {note}", markup=False)
    else:
        console = stdout_console()
        print_table(simulation, console)
        if calibration is not None:
            print_calibration(calibration, console)
    if threshold is not None and hit_rate < threshold:
        err.print(f"hit rate {hit_rate:.1%} is below --min-hit-rate {threshold:.1%}", markup=False)
        sys.exit(EXIT_GATE)
