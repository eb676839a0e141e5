"""The sources a data-flow finding names, and the lines they start on.

A value that reaches a prefix slot is reported once, where it enters the slot
(lint-rules.md, "Engine requirements"), but it can carry several sources
from other lines::

    system = f"You help ACME. Now: {datetime.now().isoformat()}. Request {uuid.uuid4()}."  # line 16
    client.messages.create(model=m, system=system, messages=msgs)                         # line 20

is one PC101 at line 20 whose message names both sources with their line:
"`datetime.datetime.now()` (line 16) and `uuid.uuid4()` (line 16) reach system=".
A rule builds a :class:`SourcedMessage`; the engine
(:mod:`promptcache.lint.filelint`) knows the lines only once it has the
positions of the reported nodes, so it renders the message then, and drops the
sources whose line carries an explicit ``# noqa: <code>`` (the finding is
silenced when all of them are).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.sources import Source

#: At most this many sources are named in one message; the rest are counted ("and 2 more").
CAP = 3
_MAX_LABEL = 60


@dataclass(frozen=True)
class SourceRef:
    """One source as a message names it.

    ``label`` is its text in the message, code in backquotes: a call by its qualified name
    (``uuid.uuid4()``), a read as written (``user.email``), or ``the per-request parameter``
    and its name. ``node`` is where the source starts in this file
    (the call, the name read, a parameter of the request handler), or None when it has no place
    of its own. ``rank`` orders the sources of a message (by kind, then source position).
    """

    label: str
    node: cst.CSTNode | None
    rank: tuple = field(default=(), compare=False)


@dataclass(frozen=True, eq=False)
class SourcedMessage:
    """A rule message that names its sources, rendered once their lines are known.

    ``template`` is a :meth:`str.format` template; besides ``fields`` it may
    use ``{sources}`` (the named sources, joined: "`a` (line 3) and `b`"),
    and words that agree with their number: ``{reach}`` ("reaches" for one
    source, "reach" for several), ``{be}`` ("is" / "are") and ``{value}``
    ("value" / "values").
    """

    template: str
    fields: Mapping[str, str]
    sources: tuple[SourceRef, ...] = field(default=())

    def render(self, kept: Sequence[tuple[SourceRef, int | None]], at_line: int) -> str:
        """The message for the sources in ``kept`` (each with its 1-based line, None when unknown).

        A line is given after a source when it differs from ``at_line``, the
        reported line; sources with the same label are named once, with all
        their other lines.
        """
        lines_of: dict[str, list[int]] = {}
        for ref, line in sorted(kept, key=lambda item: item[0].rank):
            lines = lines_of.setdefault(ref.label, [])
            if line is not None and line != at_line and line not in lines:
                lines.append(line)
        names = [label + _lines_suffix(sorted(lines)) for label, lines in lines_of.items()]
        return self.template.format(**self.fields, sources=join_capped(names), **agreement(len(names)))


def agreement(count: int) -> dict[str, str]:
    """The words of a message that agree with the number of sources it names."""
    one = count == 1
    return {"reach": "reaches" if one else "reach", "be": "is" if one else "are", "value": "value" if one else "values"}


def _lines_suffix(lines: list[int]) -> str:
    if not lines:
        return ""
    if len(lines) == 1:
        return f" (line {lines[0]})"
    return f" (lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})"


def join_capped(names: Sequence[str], cap: int = CAP) -> str:
    """``a``, ``a and b``, ``a, b and c``; past ``cap`` names: ``a, b, c and 2 more``."""
    if len(names) > cap:
        return f"{', '.join(names[:cap])} and {len(names) - cap} more"
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def source_refs(flow: FlowAnalysis, sources: Iterable[Source], kinds: Sequence[str]) -> tuple[SourceRef, ...]:
    """The sources of ``kinds`` among ``sources`` as messages name them, in the order of ``kinds``
    and then of the code.

    A name read inside a longer name is named as the longer one (``user`` in
    ``user.email``); a parameter is placed at its definition, and left out
    when another source already reads it (``user`` of ``user.email``). A
    volatile- or identity-named variable bound to a value that carries one of
    the other sources is left out too: for ``self.session_id = uuid.uuid4().hex``
    the source is ``uuid.uuid4()``, where a ``# noqa`` belongs.
    """
    rank = {kind: i for i, kind in enumerate(kinds)}
    chosen = [s for s in sources if s.kind in rank]
    keys = {_key(s) for s in chosen}
    chosen = [s for s in chosen if not _carries(flow, s, keys - {_key(s)})]
    nodes = {id(s.origin) for s in chosen if s.origin is not None}
    read = {_root_name(s.origin) for s in chosen if s.origin is not None}
    order = flow.facts.order
    refs: list[SourceRef] = []
    for s in chosen:
        if s.kind == S.PARAM and s.detail in read:
            continue
        node = s.origin if s.origin is not None else _parameter(flow, s)
        if s.origin is not None and any(id(anc) in nodes for anc in flow.facts.ancestors(s.origin)):
            continue  # `user` inside `user.email`: the outer read names it
        position = order.get(node, len(order)) if node is not None else len(order)
        label = _label(flow, s)
        refs.append(SourceRef(label, node, (rank[s.kind], position, label)))
    out: list[SourceRef] = []
    for ref in sorted(refs, key=lambda ref: ref.rank):
        if ref not in out:
            out.append(ref)
    return tuple(out)


def _key(s: Source) -> tuple:
    return (s.kind, s.detail, s.origin_id, s.func_id, s.index)


def _carries(flow: FlowAnalysis, s: Source, others: set[tuple]) -> bool:
    """True when ``s`` is a read of a variable (or ``self.attr``) bound to a value that carries ``others``."""
    origin = s.origin
    scope = flow.scope_at(origin) if isinstance(origin, (cst.Name, cst.Attribute)) else None
    if scope is None or not others:
        return False
    for b in flow.index.bindings_of(origin, scope) or ():
        if b.kind in ("assign", "walrus", "aug", "for", "with") and b.value is not None:
            if any(_key(carried) in others for carried in flow.taint.of(b.value, b.scope)):
                return True
    return False


def _root_name(node: cst.CSTNode) -> str | None:
    """``user`` for ``user``, ``user.email``, ``ctx["user_id"]`` or ``ctx.get("user_id")``."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return None


def _label(flow: FlowAnalysis, s: Source) -> str:
    if s.kind == S.PARAM:
        return f"the per-request parameter `{s.detail}`"
    if s.origin is None or (s.kind == S.VOLATILE and "(" in s.detail):
        text = s.detail  # a call, by its qualified name: `datetime.datetime.now()`
    else:
        text = _short(flow.code(_read(flow, s.origin)))
    return f"`{text}`"


def _read(flow: FlowAnalysis, node: cst.CSTNode) -> cst.CSTNode:
    """The whole attribute read around a name: ``user`` in ``user.plan.upper()`` is read as ``user.plan``."""
    parent = flow.facts.parent
    while True:
        up = parent.get(node)
        if not (isinstance(up, cst.Attribute) and up.value is node):
            return node
        above = parent.get(up)
        if isinstance(above, cst.Call) and above.func is up:
            return node
        node = up


def _short(code: str) -> str:
    text = " ".join(code.split())
    return text if len(text) <= _MAX_LABEL else text[: _MAX_LABEL - 1] + "…"


def _parameter(flow: FlowAnalysis, s: Source) -> cst.CSTNode | None:
    """The ``cst.Param`` of a per-request parameter source (its definition in the request handler)."""
    if s.kind != S.PARAM:
        return None
    scope = next((sc for sc in flow.index.scopes if id(sc) == s.func_id), None)
    if scope is None or not isinstance(scope.node, cst.FunctionDef):
        return None
    return next((p for p in descendants(scope.node.params, cst.Param) if p.name.value == s.detail), None)


__all__ = ["CAP", "SourceRef", "SourcedMessage", "agreement", "join_capped", "source_refs"]
