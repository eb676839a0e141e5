"""Settle a prompt module's findings with what its importers do with the prompt (after all files are linted).

A finding at a named definition of a prompt module (``build_prompt()``,
``SYSTEM_PROMPT``, ``Templates.ESCALATION``) assumes the prompt is a prefix
slot. Each file's result carries the facts (:mod:`promptcache.lint.prompt_uses`,
cached per file content): which definitions a finding depends on, and for LLM
files where each imported prompt-named name lands. Here the two are joined:

- a definition some use places in a prefix slot (system, tools, a message
  before others), or passes somewhere not followed: its findings stand;
- an LLM file whose uses were not seen (``UNSEEN``: a file-level noqa, a
  parse failure) or that star-imports the module: every symbol it may use
  from the modules it imports is ``unknown``, so those findings stand;
- a definition every known use places after the stable prefix (the last
  message of a list handed to a call as written, an appended message,
  PromptBuilder ``.user()``; see :mod:`promptcache.lint.prompt_uses`):
  its findings are dropped, since per-request content belongs there;
- a definition with no known use in the run (the module linted on its own,
  its importers not in the run, or only non-LLM files import it): as before,
  its findings stand.

Only files that build or send LLM requests count as users (the pre-filter's
``llm_code``, so ``--no-prefilter`` gives the same result).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from promptcache.lint import prefilter
from promptcache.lint.filelint import FileResult
from promptcache.lint.finding import Finding, Severity
from promptcache.lint.prompt_definitions import FIXED_CALL_ONLY
from promptcache.lint.prompt_places import FIXED_CALL
from promptcache.lint.prompt_uses import AFTER, UNKNOWN, UNSEEN
from promptcache.lint.markers import CHARS_PER_TOKEN
from promptcache.lint.one_shot import PER_REQUEST_CLAIM, SMALL_CLAIM
from promptcache.lint.request_size import OPTIONAL, Weight


class Settlement:
    """The landings of every prompt-module definition used in one run, and the filter they give."""

    def __init__(self, paths: list[Path], results: list[FileResult], scans: dict[Path, prefilter.Scan]):
        self.landings: dict[tuple[Path, str], set[str]] = {}
        self.sizes = {p: r.sizes for p, r in zip(paths, results) if r.sizes}
        self.fields = {p: r.fields for p, r in zip(paths, results) if r.fields}
        self.scans = scans
        self._table = None
        wanted = {p: {s.removesuffix(FIXED_CALL_ONLY) for symbols in r.depends.values() for s in symbols}
                  for p, r in zip(paths, results) if r.depends}
        if not wanted:
            return
        table = prefilter.module_table(scans)
        for path, result in zip(paths, results):
            scan = scans.get(path)
            if scan is None or not scan.llm_code:
                continue
            uses = result.uses
            if UNSEEN.keys() <= uses.keys():  # not analysed: whatever it imports may land anywhere
                uses = {module + ".*": (UNKNOWN,) for module in scan.imports}
            for qualified, kinds in uses.items():
                if not kinds:
                    continue  # read, but never sent (logged, compared): not a use that places it
                for module, symbol, whole in _readings(qualified):
                    for target in prefilter.resolve(path, module, scans, table):
                        for s in wanted.get(target, ()):
                            if symbol is None or s == symbol or (whole and s.startswith(symbol + ".")):
                                self.landings.setdefault((target, s), set()).update(kinds)

    def stands(self, path: Path, symbols: tuple[str, ...]) -> bool:
        """True unless every symbol has known uses and all of them land after the stable prefix. A symbol marked
        :data:`FIXED_CALL_ONLY` (a clock after a template input of a builder no call in its module fills) stands
        only when some importer calls it with fixed arguments and places it in the prefix."""
        for s in symbols:
            base = s.removesuffix(FIXED_CALL_ONLY)
            kinds = self.landings.get((path, base))
            if base != s:
                if kinds is not None and FIXED_CALL in kinds and kinds - {AFTER, FIXED_CALL}:
                    return True
            elif kinds is None or kinds - {AFTER, FIXED_CALL}:
                return True
        return False

    def settle(self, path: Path, result: FileResult) -> FileResult:
        """``result`` without the findings whose definitions are only used after the prefix, and with the
        findings of one-shot requests shorter than the minimum cacheable length at info level."""
        if result.requires:  # a value filled into an imported template: only if the template names its variable
            result = replace(result, findings=[f for f in result.findings if (f.code, f.line) not in result.requires
                                               or any(self._names(path, *r) for r in result.requires[(f.code, f.line)])])
        if result.weights:
            result = replace(result, findings=[self._weighed(path, f, result.weights.get((f.code, f.line)))
                                               for f in result.findings])
        if not result.depends or not self.landings and not _conditional(result):
            return result
        kept = [f for f in result.findings
                if (f.code, f.line) not in result.depends or self.stands(path, result.depends[(f.code, f.line)])]
        return result if len(kept) == len(result.findings) else replace(result, findings=kept)


    def _weighed(self, path: Path, finding: Finding, weight: Weight | None) -> Finding:
        """``finding`` at info level, saying why, when its request's literal text (the imported names' included)
        is known and below the minimum cacheable length."""
        if weight is None:
            return finding
        chars = weight.size.chars
        for qualified in sorted(weight.size.symbols):
            found = self._size_of(path, qualified.removeprefix(OPTIONAL))
            if found is None and not qualified.startswith(OPTIONAL):
                return finding
            chars += found or 0
        tokens = chars // CHARS_PER_TOKEN
        if tokens >= weight.minimum:
            return finding
        claim = SMALL_CLAIM.format(tokens=tokens, minimum=weight.minimum, model=weight.model)
        if PER_REQUEST_CLAIM in finding.message:
            return replace(finding, severity=Severity.INFO, message=finding.message.replace(PER_REQUEST_CLAIM, claim))
        return replace(finding, severity=Severity.INFO, message=f"{finding.message}; {claim}")

    def _names(self, path: Path, qualified: str, variable: str) -> bool:
        """Whether the template constant an import names, in a module of the run, has the field ``variable``."""
        return variable in self._lookup(self.fields, path, qualified, ())

    def _size_of(self, path: Path, qualified: str) -> int | None:
        """The text size of the module constant an import names, from the defining module's result; None when
        that module is not in the run, or the name is not a constant it shows whole."""
        return self._lookup(self.sizes, path, qualified, None)

    def _lookup(self, table: dict, path: Path, qualified: str, default):
        """``table[file][symbol]`` for the file and symbol that the import ``qualified`` in ``path`` names."""
        if self._table is None:
            self._table = prefilter.module_table(self.scans)
        for module, symbol, _ in _readings(qualified):
            for target in prefilter.resolve(path, module, self.scans, self._table):
                if symbol in table.get(target, {}):
                    return table[target][symbol]
        return default

def _conditional(result: FileResult) -> bool:
    return any(s.endswith(FIXED_CALL_ONLY) for symbols in result.depends.values() for s in symbols)


def _splits(qualified: str) -> list[tuple[str, str]]:
    """``(module, symbol)`` readings of a qualified name: ``a.b.C.X`` gives ``(a, b.C.X)``, ``(a.b, C.X)``,
    ``(a.b.C, X)``; a relative ``.p.X`` gives ``(.p, X)``."""
    dots = len(qualified) - len(qualified.lstrip("."))
    parts = qualified[dots:].split(".")
    return [("." * dots + ".".join(parts[:i]), ".".join(parts[i:])) for i in range(1, len(parts))]


def _readings(qualified: str) -> list[tuple[str, str | None, bool]]:
    """``(module, symbol, whole)`` readings of a use: ``.p.X`` is symbol ``X`` of ``.p``; ``.p.X.*`` (a star
    import, or an import of an unseen file) is all of ``X`` (``whole``: ``X.Y`` too), or all of module
    ``.p.X`` (symbol None)."""
    if not qualified.endswith(".*"):
        return [(m, s, False) for m, s in _splits(qualified)]
    base = qualified[:-2]
    return [(m, s, True) for m, s in _splits(base)] + [(base, None, True)]


__all__ = ["Settlement"]
