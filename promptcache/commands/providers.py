"""``promptcache providers``: the provider cache rules in use, with their dates and sources."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.text import Text

from promptcache.commands.options import AS_OF
from promptcache.commands.tables import Column, print_table, stdout_console
from promptcache.providers.datafile import (PROVIDERS, STALE_AFTER_DAYS, data_age, load_rules, reviewed_on,
                                            user_rules_origin)
from promptcache.providers.table import ProviderRow, provider_rows
from promptcache.providers.userfile import ProvidersFileError, use_user_rules

def _num(value: float) -> str:
    return f"{value:g}"


def _mark(text: str, row: ProviderRow, *fields: str) -> str:
    return text + ("*" if any(f in row.profile.assumed for f in fields) else "")


def _price(row: ProviderRow) -> str:
    p = row.profile
    if p.input_usd_per_mtok is None:
        return "-"
    out = "" if p.output_usd_per_mtok is None else f"/{_num(p.output_usd_per_mtok)}"
    text = f"{_num(p.input_usd_per_mtok)}{out}"
    for tier in p.price_tiers:
        tier_out = "" if tier.output_usd_per_mtok is None else f"/{_num(tier.output_usd_per_mtok)}"
        text += f"\n>{tier.above_tokens // 1000}k:\n{_num(tier.input_usd_per_mtok)}{tier_out}"
    return _mark(text, row, "input_usd_per_mtok", "output_usd_per_mtok", "price_tiers")


def _ttls(row: ProviderRow) -> str:
    ttls = sorted(row.profile.ttl_seconds.items(), key=lambda kv: kv[1])
    return _mark(" ".join(label for label, _ in ttls) or "-", row, "ttl_seconds")


def _writes(row: ProviderRow) -> str:
    p = row.profile
    labels = sorted(p.ttl_seconds, key=p.ttl_seconds.__getitem__)
    text = "/".join(_num(p.write_multipliers[label]) for label in labels if label in p.write_multipliers)
    return _mark(text or "-", row, "write_multipliers")


def _model(row: ProviderRow) -> str:
    p = row.profile
    text = p.model + "".join(f"\n{alias}" for alias in row.aliases)
    if p.retired is not None:
        text += f"\n{'retired' if p.retired_on() else 'retires'} {p.retired.isoformat()}"
    return text


def _cite(key: str) -> str:
    return str(load_rules().get("sources", {}).get(key, {}).get("cite", key))


def _source(row: ProviderRow) -> str:
    return " ".join(_cite(key) for key in row.sources)


def print_sources(rows: list[ProviderRow], console: Console) -> None:
    """The sources the rows cite: short label, key, read date, title (secondary ones say so)."""
    known = load_rules().get("sources", {})
    for key in dict.fromkeys(key for row in rows for key in row.sources):
        source = known.get(key, {})
        second = " (secondary)" if source.get("secondary") else ""
        dated = f"dated {source['dated']}, " if source.get("dated") else ""
        console.print(f"{_cite(key)} = {key}, {dated}read {source.get('read', '?')}{second}: "
                      f"{source.get('title', '')}",
                      markup=False, overflow="fold")


COLUMNS = (Column("model", justify="left"), Column("min"), Column("read"), Column("write"),
           Column("TTLs", justify="left", text=True), Column("$/Mtok", justify="left", text=True),
           Column("as of, source", "as of", justify="left", text=True))


def print_tables(rows: list[ProviderRow], console: Console) -> None:
    """One table per provider (model, minimum, read / write multipliers, TTLs, price, as of, source), fitted
    to the console's width by :func:`~promptcache.commands.tables.print_table`."""
    for provider in dict.fromkeys(r.profile.provider for r in rows):
        mine = [r for r in rows if r.profile.provider == provider]
        cells = []
        for row in mine:
            p = row.profile
            cells.append([Text(_model(row)), _mark(f"{p.min_cacheable_tokens:,}", row, "min_cacheable_tokens"),
                          _mark(_num(p.read_multiplier), row, "read_multiplier"), _writes(row), Text(_ttls(row)),
                          Text(_price(row)), Text(f"{row.read.isoformat() if row.read else '-'} {_source(row)}")])
        print_table(console, f"{provider} ({mine[0].profile.api})", COLUMNS, cells, title_justify="left")
        console.print()


@click.command("providers")
@click.option("--provider", "only", type=click.Choice(PROVIDERS), multiple=True, help="Only this provider (repeatable).")
@click.option("--as-of", type=AS_OF, help="Show the values in force on this date (YYYY-MM-DD).")
@click.option("--all", "show_all", is_flag=True, help="Also list retired models.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every value with its source and read date.")
@click.option("--providers", "rules_file", type=click.Path(dir_okay=False, path_type=str),
              help="A rules file (providers.toml layout) that overrides or adds models; default: "
                   "[tool.promptcache.providers] in pyproject.toml, if any.")
def providers(only, as_of, show_all, as_json, rules_file):
    """Print the provider prompt-cache rules promptcache uses: per model the minimum cacheable prompt,
    read / write multipliers (x base input price), TTLs, list price (USD per million tokens), the date
    the values were read and their sources (explained under the tables; docs/providers.md).

    A value marked * is assumed: no source settles it.
    """
    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    try:
        origin = use_user_rules(rules_file)
    except ProvidersFileError as exc:
        err.print(f"error: {exc}", markup=False)
        sys.exit(2)
    rows = provider_rows(tuple(only) or PROVIDERS, as_of=as_of)
    hidden = [r for r in rows if r.profile.retired_on()] if not show_all else []
    rows = [r for r in rows if r not in hidden]
    if as_json:
        click.echo(json.dumps({"reviewed": reviewed_on().isoformat(), "user_rules": origin,
                               "as_of": as_of.isoformat() if as_of else None,
                               "models": [r.to_dict() for r in rows]}, indent=2))
        return
    console = stdout_console()
    print_tables(rows, console)
    age = data_age()
    console.print(f"Rules data reviewed {reviewed_on().isoformat()} ({age} days ago"
                  + (f", older than {STALE_AFTER_DAYS} days: check the providers' docs" if age > STALE_AFTER_DAYS
                     else "") + ")" + (f"; user rules from {user_rules_origin()}" if origin else "") + ".",
                  markup=False)
    console.print("min: minimum cacheable prompt (tokens). read / write: price of a cached / written token, x the "
                  "base input price (write per TTL, shortest first; - no write fee). TTLs: seconds in --json. "
                  "$/Mtok: USD input/output list price per million tokens; >Nk: the price above N thousand prompt "
                  "tokens. as of: the oldest date of the row's values (the date of the source document where known, "
                  "else the day it was read). * assumed: no source settles the "
                  "value.", markup=False)
    print_sources(rows, console)
    if hidden:
        console.print(f"{len(hidden)} retired model(s) not shown (--all lists them).", markup=False)
