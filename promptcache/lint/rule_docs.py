"""Rule documentation pages, shared by ``promptcache rule CODE`` and ``docs/gen_rule_pages.py``."""

from __future__ import annotations

from promptcache.lint.registry import discover
from promptcache.lint.rule import LintRule


class UnknownRule(LookupError):
    """Raised for a code that names no rule; the message lists how to find the codes."""


def rule_for(code: str) -> type[LintRule]:
    """The rule class for ``code`` or its name (``PC101``, ``pc101``, ``volatile-in-system-prompt``); raises
    :class:`UnknownRule`."""
    rules = discover()
    key = code.strip()
    found = rules.get(key.upper()) or next((r for r in rules.values() if r.name == key.lower()), None)
    if found is None:
        raise UnknownRule(f"unknown rule {code!r}; run `promptcache rules` to list the codes and names")
    return found


def rule_page(rule: type[LintRule]) -> str:
    """The Markdown page of one rule: title, severity and fixability, then its documentation."""
    fix = {"safe": "safe fix available", "unsafe": "unsafe fix available"}.get(rule.fixable or "", "no fix")
    return (
        f"# {rule.code}: {rule.name}\n\n"
        f"Severity: **{rule.severity.value}** · {fix}\n\n"
        f"{rule.documentation()}"
    )


def index_page() -> str:
    """The Markdown index of all rules (a table)."""
    lines = ["# promptcache lint rules", "", "| code | name | severity | fix |", "|---|---|---|---|"]
    for code, rule in discover().items():
        lines.append(f"| [{code}]({code}.md) | {rule.name} | {rule.severity.value} | {rule.fixable or '-'} |")
    return "\n".join(lines) + "\n"
