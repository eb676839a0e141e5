"""Rule documentation pages, shared by ``promptcache rule CODE`` and ``docs/gen_rule_pages.py``."""

from __future__ import annotations

import difflib
import textwrap

from promptcache.lint.registry import discover
from promptcache.lint.rule import LintRule, markdown_code


class UnknownRule(LookupError):
    """Raised for a code that names no rule; the message lists how to find the codes."""


def rule_for(code: str) -> type[LintRule]:
    """The rule class for ``code`` or its name (``PC101``, ``pc101``, ``volatile-in-system-prompt``); raises
    :class:`UnknownRule`."""
    rules = discover()
    key = code.strip()
    found = rules.get(key.upper()) or next((r for r in rules.values() if r.name == key.lower()), None)
    if found is None:
        prefixed = sorted(c for c in rules if c.startswith(key.upper())) if key else []
        spelled = {c.lower(): c for c in rules} | {r.name: r.name for r in rules.values()}
        close = [spelled[c] for c in difflib.get_close_matches(key.lower(), list(spelled), n=3)]
        if prefixed:
            hint = f"it is a prefix of {', '.join(prefixed)}: name one of them"
        elif close:
            hint = f"did you mean {' or '.join(close)}?"
        else:
            hint = "run `promptcache rules` to list the codes and names"
        raise UnknownRule(f"unknown rule {code!r}; {hint}")
    return found


PAGE_WIDTH = 79
"""Prose lines of a rule page are wrapped to this (an 80-column terminal: ``promptcache rule CODE``)."""


def rule_page(rule: type[LintRule]) -> str:
    """The Markdown page of one rule: title, severity and fixability, then its documentation (prose rewrapped to
    :data:`PAGE_WIDTH`; code blocks, headings and tables as written)."""
    fix = {"safe": "safe fix available", "unsafe": "unsafe fix available"}.get(rule.fixable or "", "no fix")
    page = (
        f"# {rule.code}: {rule.name}\n\n"
        f"Severity: **{rule.severity.value}** · {fix}\n\n"
        f"{_reflow(rule.documentation())}"
    )
    if rule.code[:3] in _REQUEST_FAMILIES:  # the rules that read requests where they are sent (newcomer helper-92)
        page = page.rstrip("\n") + "\n\n" + _reflow(_WRAPPERS)
    return page


_REQUEST_FAMILIES = ("PC1", "PC2", "PC3", "PC5", "PC6")
_WRAPPERS = """## Requests sent through your own wrapper
The rule reads a request where the SDK is called (`anthropic`, `openai`,
LiteLLM, Gemini, a LangChain chat model's `.invoke`). An app that sends every
request through its own function or class (`self.llm.ask(...)`, the SDK call in
another module) is checked once that wrapper is named in `extra-sinks`, with a
table when its parameters have names of their own (docs/lint.md,
Configuration).
"""


def _reflow(text: str) -> str:
    """Markdown ``text`` with each paragraph and list item joined and wrapped to :data:`PAGE_WIDTH`."""
    out: list[str] = []
    item: list[str] = []
    fenced = False

    def flush() -> None:
        if item:
            bullet = "- " if item[0].startswith("- ") else ""
            words = markdown_code(" ".join(line.strip() for line in item)[len(bullet):])
            out.extend(textwrap.wrap(words, PAGE_WIDTH, initial_indent=bullet, subsequent_indent=" " * len(bullet),
                                     break_long_words=False, break_on_hyphens=False))
            item.clear()

    for line in text.splitlines():
        if line.startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
        elif fenced or not line.strip() or line.startswith(("#", "|")):
            flush()
            out.append(line)
        else:
            if line.startswith("- "):
                flush()
            item.append(line)
    flush()
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def index_page() -> str:
    """The Markdown index of all rules (a table)."""
    lines = ["# promptcache lint rules", "", "| code | name | severity | fix |", "|---|---|---|---|"]
    for code, rule in discover().items():
        lines.append(f"| [{code}]({code}.md) | {rule.name} | {rule.severity.value} | {rule.fixable or '-'} |")
    return "\n".join(lines) + "\n"
