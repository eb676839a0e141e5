"""``promptcache rules`` (the rule table) and ``promptcache rule CODE`` (one rule's documentation)."""

from __future__ import annotations

import json
import sys

import click
from rich.text import Text

from promptcache.commands.tables import Column, print_table, stdout_console
from promptcache.lint.registry import discover
from promptcache.lint.rule_docs import UnknownRule, rule_for, rule_page


@click.command("rules")
@click.option("--output-format", type=click.Choice(["table", "json"]), default="table", show_default=True)
def rules(output_format):
    """List the lint rules: code, name, severity and whether a fix exists."""
    found = discover()
    if output_format == "json":
        rows = [{"code": c, "name": r.name, "severity": r.severity.value, "fix": r.fixable, "summary": r.summary()} for c, r in found.items()]
        click.echo(json.dumps(rows, indent=2))
        return
    columns = (Column("code", justify="left"), Column("name", justify="left", text=True),
               Column("severity", "sev.", justify="left"), Column("fix", justify="left"))
    rows = [[Text(code), Text(rule.name), Text(rule.severity.value), Text(rule.fixable or "-")]
            for code, rule in found.items()]
    print_table(stdout_console(), None, columns, rows)


@click.command("rule")
@click.argument("code")
def rule(code):
    """Print the documentation of one rule, by code or name (e.g. `promptcache rule PC101`)."""
    try:
        found = rule_for(code)
    except UnknownRule as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    # The page's Markdown as it is, as `ruff rule` prints it: wrapped to 79 columns, its code blocks copyable
    # (rendered by rich, a code block was wrapped mid-string and every line padded with spaces: newcomer helper-90).
    click.echo(rule_page(found), nl=False)
