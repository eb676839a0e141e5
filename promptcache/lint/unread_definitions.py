"""The named definitions no file of the run reads: dead text (joined after all files are linted).

A finding at a named definition (``SYSTEM_PROMPT``, ``Templates.GREETING``,
``build_prompt``) that its module never reads (the finding's ``depends``,
:mod:`promptcache.lint.prompt_definitions`) is about text that may never be
sent. It is **unread**, and :class:`~promptcache.lint.cross_module.Settlement`
drops the finding, when all of these hold:

- the module was found in a folder of the run, not named on its own
  (pre-commit and changed-files CI name the edited files; their importers are
  mostly outside the run);
- another file of the run imports the module (the pre-filter's imports, bytes
  only), so its importers were seen;
- none of those reads it (:mod:`promptcache.lint.import_reads`): no read of the
  name, of a class or module holding it, no star import, no import of it left
  unread (a re-export), and no importer whose facts are unknown (``UNSEEN``: a
  file-level noqa, a parse failure) or that was not linted.

The module linted alone, or none of its importers in the run: it is not
judged, and its findings stand as before. The runner lints the importers the
pre-filter skipped for their facts (:func:`importers` says which), so
``--no-prefilter`` gives the same answer.
"""

from __future__ import annotations

from pathlib import Path

from promptcache.lint import prefilter
from promptcache.lint.filelint import FileResult
from promptcache.lint.prompt_uses import UNSEEN


def importers(modules: set[Path], scans: dict[Path, prefilter.Scan]) -> dict[Path, set[Path]]:
    """``{module: the other files of scans that import it}`` for each of ``modules``."""
    table = prefilter.module_table(scans)
    out: dict[Path, set[Path]] = {m: set() for m in modules}
    if not modules:
        return out
    for path, scan in scans.items():
        for module in scan.imports:
            for target in prefilter.resolve(path, module, scans, table):
                if target in out and target != path:
                    out[target].add(path)
    return out


def unread(readers_of: dict[Path, set[Path]], results: dict[Path, FileResult],
           scans: dict[Path, prefilter.Scan]) -> set[tuple[Path, str]]:
    """``(module, symbol)`` for each symbol a finding of a judged module depends on that no file reads (see
    the module docstring). ``readers_of``: :func:`importers` of the judged modules; ``results``: the linted
    files of the run; ``scans``: all its files."""
    wanted = {p: {s for symbols in results[p].depends.values() for s in symbols} for p in readers_of}
    found: set[tuple[Path, str]] = set()
    resolver = _Resolver(scans)
    for module, symbols in wanted.items():
        left = set(symbols) if readers_of[module] else set()
        for reader in sorted(readers_of[module]):
            result = results.get(reader)
            if result is None or UNSEEN.keys() <= result.uses.keys():
                left = set()  # not linted, or its reads not known: it may read any of them
            else:
                left = {s for s in left if not any(resolver.covers(reader, q, module, s) for q in result.reads)}
            if not left:
                break
        found.update((module, s) for s in left)
    return found


def module_splits(qualified: str) -> list[tuple[str, str]]:
    """``(module, symbol)`` readings of a qualified name: ``a.b.C.X`` gives ``(a, b.C.X)``, ``(a.b, C.X)``,
    ``(a.b.C, X)``; a relative ``.p.X`` gives ``(.p, X)``."""
    dots = len(qualified) - len(qualified.lstrip("."))
    parts = qualified[dots:].split(".")
    return [("." * dots + ".".join(parts[:i]), ".".join(parts[i:])) for i in range(1, len(parts))]


class _Resolver:
    """:func:`prefilter.resolve` over the run's files, memoised per (file, module name)."""

    def __init__(self, scans: dict[Path, prefilter.Scan]):
        self.scans = scans
        self.table = prefilter.module_table(scans)
        self.memo: dict[tuple[Path, str], list[Path]] = {}

    def resolve(self, path: Path, module: str) -> list[Path]:
        key = (path, module)
        if key not in self.memo:
            self.memo[key] = prefilter.resolve(path, module, self.scans, self.table) if module.strip(".") else []
        return self.memo[key]

    def covers(self, reader: Path, qualified: str, module: Path, symbol: str) -> bool:
        """True when ``reader``'s read ``qualified`` may read ``symbol`` of ``module``: the symbol, what holds it
        (a class, the module, its package) or what it holds (``SYSTEM.format``); ``m.*`` or a dunder
        (``m.__dict__``) reads all of ``m``."""
        whole = qualified.endswith(".*")
        base = qualified[:-2] if whole else qualified
        for target in self.resolve(reader, base):
            if target == module or (target.name == "__init__.py" and target.parent in module.parents):
                return True
        for name, rest in module_splits(base):
            if module not in self.resolve(reader, name):
                continue
            if whole or rest.startswith("__") or symbol == rest or symbol.startswith(rest + ".") or rest.startswith(symbol + "."):
                return True
        return False


__all__ = ["importers", "module_splits", "unread"]
