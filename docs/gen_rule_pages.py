"""Generate the rule pages ``docs/rules/PCxxx.md`` and ``docs/rules/index.md`` from the rule classes.

Usage::

    python docs/gen_rule_pages.py              # (re)write the pages
    python docs/gen_rule_pages.py --check      # write nothing; exit 1 when a page is missing or stale
    python docs/gen_rule_pages.py --dir PATH   # another folder (default docs/rules)
    python docs/gen_rule_pages.py --help

The text of each page is the rule's own documentation (its docstring), so the
pages, ``promptcache rule PC101`` and the SARIF rule descriptions never drift
apart; ``tests/lint/test_lint_docs.py`` runs the check.
"""

from __future__ import annotations

import argparse
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
    """Replace the ``*.md`` pages of ``directory`` (created if missing) with :func:`pages`."""
    directory.mkdir(parents=True, exist_ok=True)
    for p in directory.glob("*.md"):
        p.unlink()
    for name, text in pages().items():
        (directory / name).write_text(text, encoding="utf-8")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: ``--check`` and ``--dir`` (``--help`` prints the usage and exits 0, an unknown
    argument exits 2; neither writes a page)."""
    parser = argparse.ArgumentParser(
        prog="python docs/gen_rule_pages.py",
        description="Write docs/rules/PCxxx.md and docs/rules/index.md from the rule classes' documentation.",
    )
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page is missing, stale or left over from a removed rule")
    parser.add_argument("--dir", type=Path, default=RULES_DIR, metavar="PATH",
                        help="the folder of the rule pages (default: docs/rules beside this script)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status: 0 written or up to date, 1 stale pages (``--check``)."""
    args = parse_args(argv)
    if args.check:
        problems = stale(args.dir)
        if problems:
            print("stale rule pages (run `python docs/gen_rule_pages.py`): " + ", ".join(problems))
            return 1
        print("rule pages are up to date")
        return 0
    write(args.dir)
    print(f"wrote {len(pages())} pages to {args.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
