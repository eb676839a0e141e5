"""Generate the rule pages ``docs/rules/PCxxx.md`` and ``docs/rules/index.md`` from the rule classes.

Usage::

    python docs/gen_rule_pages.py          # (re)write the pages
    python docs/gen_rule_pages.py --check  # exit 1 when a page is missing or stale

The text of each page is the rule's own documentation (its docstring), so the
pages, ``promptcache rule PC101`` and the SARIF rule descriptions never drift
apart; ``tests/lint/test_lint_docs.py`` runs the check.
"""

from __future__ import annotations

import sys
from pathlib import Path

from promptcache.lint.registry import discover
from promptcache.lint.rule_docs import index_page, rule_page

RULES_DIR = Path(__file__).resolve().parent / "rules"


def pages() -> dict[str, str]:
    """``{file name: Markdown text}`` for every rule page and the index."""
    out = {f"{code}.md": rule_page(rule) for code, rule in discover().items()}
    out["index.md"] = index_page()
    return out


def stale(directory: Path = RULES_DIR) -> list[str]:
    """Names of pages that are missing, different, or left over from a removed rule."""
    wanted = pages()
    problems = [name for name, text in wanted.items() if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != text]
    problems += [p.name for p in directory.glob("*.md") if p.name not in wanted]
    return sorted(problems)


def write(directory: Path = RULES_DIR) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for p in directory.glob("*.md"):
        p.unlink()
    for name, text in pages().items():
        (directory / name).write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        problems = stale()
        if problems:
            print("stale rule pages (run `python docs/gen_rule_pages.py`): " + ", ".join(problems))
            return 1
        print("rule pages are up to date")
        return 0
    write()
    print(f"wrote {len(pages())} pages to {RULES_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
