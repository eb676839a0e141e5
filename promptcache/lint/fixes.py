"""A finding's fix from its rules' node fixes: positioned edits, merged without ever offering a half-fix.

A rule states a fix on nodes (:class:`~promptcache.lint.rule.NodeFix`: replace
each node's source with new text). The engine gives the nodes their 1-based
positions here. When several reports of one code on one line become one
finding (the parts of one f-string; one constant read by two ``tools=``
slots), the finding's fix must cover all of them, because applying it is
meant to make the finding go away:

- the edits of every report are united, identical edits once, in source
  order (ruff orders a fix's edits by position too);
- when two different edits overlap (or insert at the same place), no order
  of applying them is right, so the fix keeps its description, says why and
  carries no edit;
- when some report has no edit (its fix can only be described, or it has no
  fix), fixing only the others would leave the finding in place, so the fix
  carries no edit either and says so.

Descriptions are kept once each, in report order; the applicability is
``unsafe`` when any part is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from promptcache.lint.finding import Applicability, Edit, Fix
from promptcache.lint.rule import NodeFix

_PARTIAL = (
    "no edit is offered: fixing only the other places this finding covers would leave the order unfixed"
)


def resolve(fix: NodeFix | None, ranges: Mapping[cst.CSTNode, tuple[int, int, int, int]]) -> Fix | None:
    """``fix`` with positions: one :class:`Edit` per replacement and insertion (``ranges`` maps a node to its 0-based
    ``(line, column, end_line, end_column)``, lines 1-based). A replacement whose node has no position
    (a node the engine could not locate) leaves the fix without edits, never with some of them."""
    if fix is None:
        return None
    edits = []
    for node, content in fix.replacements:
        r = ranges.get(node)
        if r is None:
            return Fix(f"{fix.description}; no edit is offered: the code to change could not be located", fix.applicability)
        edits.append(Edit(r[0], r[1] + 1, r[2], r[3] + 1, content))
    for node, content, after in fix.insertions:
        r = ranges.get(node)
        if r is None:
            return Fix(f"{fix.description}; no edit is offered: the code to change could not be located", fix.applicability)
        line, column = (r[2], r[3]) if after else (r[0], r[1])
        edits.append(Edit(line, column + 1, line, column + 1, content))
    return merge([Fix(fix.description, fix.applicability, tuple(edits))])


def merge(fixes: Sequence[Fix | None]) -> Fix | None:
    """One fix for the reports merged into one finding (see the module docstring); None when no report has one.

    ``fixes`` has one entry per report, None for a report without a fix.
    """
    present = [f for f in fixes if f is not None]
    if not present:
        return None
    applicability = Applicability.UNSAFE if any(f.applicability is Applicability.UNSAFE for f in present) else Applicability.SAFE
    with_edits = [f for f in present if f.edits]
    if not with_edits:
        return Fix(_join(f.description for f in present), applicability)
    if len(with_edits) < len(fixes):
        described = _join(f.description for f in fixes if f is not None and not f.edits)
        return Fix(f"{described}; {_PARTIAL}" if described else _PARTIAL[0].upper() + _PARTIAL[1:], applicability)
    description = _join(f.description for f in with_edits)
    edits = sorted(dict.fromkeys(e for f in with_edits for e in f.edits), key=_span)
    for before, after in zip(edits, edits[1:]):
        if _start(after) < _end(before) or _start(after) == _start(before):
            return Fix(
                f"{description}; no edit is offered: the edits at {before.start_line}:{before.start_column} and "
                f"{after.start_line}:{after.start_column} overlap, so they cannot both be applied; make the change by hand",
                applicability,
            )
    return Fix(description, applicability, tuple(edits))


def _join(descriptions) -> str:
    return "; ".join(dict.fromkeys(d for d in descriptions if d))


def _start(e: Edit) -> tuple[int, int]:
    return (e.start_line, e.start_column)


def _end(e: Edit) -> tuple[int, int]:
    return (e.end_line, e.end_column)


def _span(e: Edit) -> tuple[int, int, int, int]:
    return (e.start_line, e.start_column, e.end_line, e.end_column)


__all__ = ["merge", "resolve"]
