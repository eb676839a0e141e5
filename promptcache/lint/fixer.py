"""Applying fixes to a file until it is stable (``promptcache lint --fix`` / ``--diff``).

A pass lints the text, takes the findings whose fix carries edits and is
allowed (``safe``, or ``unsafe`` too with ``--unsafe-fixes``), and applies as
many as do not overlap: a finding whose edits overlap an edit already taken
waits for the next pass, where it is reported again on the new text, so
overlapping edits never corrupt a file (ruff does the same). Identical edits
of two findings (one ``import textwrap`` line) are applied once. A pass whose
result would not parse is dropped, and fixing stops there. At most
``MAX_PASSES`` passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import FileResult, lint_bytes, parse
from promptcache.lint.finding import Applicability, Edit, Finding
from promptcache.lint.positions import source_lines
from promptcache.lint.rule import LintRule

MAX_PASSES = 5


@dataclass
class FixedFile:
    """What fixing one file did: the new bytes, the fixes applied per code and the findings left.

    ``data`` equals the input when nothing was fixed; ``remaining`` is the last
    lint of ``data`` (every finding still there, fixable ones included when a
    pass could not apply them).
    """

    data: bytes
    fixed: Counter = field(default_factory=Counter)
    remaining: FileResult | None = None

    @property
    def changed(self) -> bool:
        return sum(self.fixed.values()) > 0


def applicable(finding: Finding, unsafe: bool) -> bool:
    """True when ``finding`` has edits that this mode may apply."""
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (unsafe or fix.applicability is Applicability.SAFE)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` applied (1-based lines and code-point columns, end exclusive).

    Raises ``ValueError`` when two edits overlap or one lies outside the text.
    """
    starts = [0]
    for line in source_lines(text):
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if not 1 <= line <= len(starts) or column < 1:
            raise ValueError(f"edit position {line}:{column} is outside the file")
        at = starts[line - 1] + column - 1
        if at > len(text):
            raise ValueError(f"edit position {line}:{column} is outside the file")
        return at

    spans = sorted({(offset(e.start_line, e.start_column), offset(e.end_line, e.end_column), e.content) for e in edits})
    for (s1, e1, _), (s2, _, _) in zip(spans, spans[1:]):
        if s2 < e1 or (s2 == s1):
            raise ValueError("overlapping edits")
    for start, end, content in reversed(spans):
        text = text[:start] + content + text[end:]
    return text


def _choose(findings: Sequence[Finding], unsafe: bool) -> tuple[list[Finding], list[Edit]]:
    """The findings of one pass whose edits fit together (first come, first served), and their edits."""
    taken: list[Finding] = []
    edits: dict[Edit, None] = {}
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for finding in findings:
        if not applicable(finding, unsafe):
            continue
        new = [e for e in finding.fix.edits if e not in edits]
        mine = [((e.start_line, e.start_column), (e.end_line, e.end_column)) for e in new]
        if any(_overlap(a, b) for a in mine for b in spans):
            continue
        taken.append(finding)
        spans += mine
        edits.update(dict.fromkeys(new))
    return taken, list(edits)


def _overlap(a, b) -> bool:
    (s1, e1), (s2, e2) = a, b
    if s1 == s2:
        return True
    return s1 < e2 and s2 < e1


def fix_bytes(
    data: bytes,
    path: str,
    rules: Sequence[type[LintRule]],
    config: LintConfig,
    prompt_module: bool = False,
    *,
    unsafe: bool = False,
    first: FileResult | None = None,
    settle: Callable[[FileResult], FileResult] | None = None,
) -> FixedFile:
    """Fix ``data`` (one file's bytes) until no allowed fix is left or ``MAX_PASSES`` passes ran.

    ``first`` is a lint of ``data`` already made (saves the first pass's lint); ``settle`` filters each lint
    made here as the run filtered ``first`` (a prompt module's findings its importers settle:
    :mod:`promptcache.lint.cross_module`). The text keeps its
    encoding; a file that does not decode or parse is returned unchanged.
    """
    result = first if first is not None else lint_bytes(data, path, rules, config, prompt_module)
    outcome = FixedFile(data, remaining=result)
    module = parse(data, path)
    if isinstance(module, Finding):
        return outcome
    encoding = module.encoding
    for _ in range(MAX_PASSES):
        taken, edits = _choose(outcome.remaining.findings, unsafe)
        if not taken:
            break
        try:
            text = apply_edits(outcome.data.decode(encoding), edits)
            new = text.encode(encoding)
        except (ValueError, UnicodeError):
            break
        if isinstance(parse(new, path), Finding):
            break  # a fix that breaks the syntax is never written
        outcome.data = new
        outcome.fixed.update(f.code for f in taken)
        outcome.remaining = lint_bytes(new, path, rules, config, prompt_module)
        if settle is not None:
            outcome.remaining = settle(outcome.remaining)
    return outcome


__all__ = ["MAX_PASSES", "FixedFile", "applicable", "apply_edits", "fix_bytes"]
