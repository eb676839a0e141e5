"""Which named definitions of a prompt module a finding there depends on (one file's half of
:mod:`promptcache.lint.cross_module`; the importers' half is :mod:`promptcache.lint.prompt_uses`).

A finding at ``SYSTEM_PROMPT = f"...{now}"``, ``Templates.GREETING`` or the
return of ``def build_prompt(...)`` stands or falls with where the importers
put that definition; a finding at any other slot (a ``system=`` keyword, a
system message), or at a definition the module reads itself, stands on its own.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.prompt_places import is_store

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.flow_facts import Issue
    from promptcache.lint.index import Scope
    from promptcache.lint.slots import Slot

FIXED_CALL_ONLY = "@fixed-call"  # a symbol's suffix: its finding stands only if an importer calls it with fixed arguments
_READS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # FlowAnalysis -> {name: the Names reading it}


def definition_symbol(slot: Slot) -> str | None:
    """The module-level symbol a named slot is (``NAME``, ``Class.NAME``, ``build``, ``Class.build``), or None
    for any other slot (a ``system=`` keyword, a system message): those findings stand on their own."""
    if slot.kind not in ("constant", "builder") or slot.holder is not None or slot.sink is not None:
        return None
    scope = slot.scope
    if slot.kind == "constant":
        owner, name = scope, slot.label
    else:
        owner, name = scope.parent, scope.name
    if owner is None:
        return None
    if owner.kind == "module":
        return name
    if owner.kind == "class" and owner.parent is not None and owner.parent.kind == "module":
        return f"{owner.name}.{name}"
    return None


def definition_symbols(flow: FlowAnalysis, issue: Issue) -> tuple[str, ...] | None:
    """The symbols an issue in a prompt module depends on (all its slots are named definitions that the
    module itself does not read), or None when it stands whatever the importers do."""
    if not flow.prompt_module:
        return None
    found = []
    for slot in (issue.slot, *issue.more_slots):
        symbol = definition_symbol(slot)
        if symbol is None or _read_in_module(flow, symbol):
            return None
        found.append(symbol + FIXED_CALL_ONLY if issue.fixed_call_only else symbol)
    return tuple(sorted(set(found)))


def _read_in_module(flow: FlowAnalysis, symbol: str) -> bool:
    """True when the module reads its own top-level name (``BASE`` in ``SYSTEM = BASE + ...``): that use is
    not followed, so the finding stands."""
    top = symbol.split(".", 1)[0]
    reads = _READS.get(flow)
    if reads is None:
        reads = _READS[flow] = {}
        parent = flow.facts.parent
        for node in flow.facts.of_type(cst.Name):
            if not is_store(node, parent[node]):
                reads.setdefault(node.value, []).append(node)
    for node in reads.get(top, ()):
        scope = flow.scope_at(node)
        if scope is not None and flow.index.lookup(top, scope)[0] is _module_scope(flow):
            return True
    return False


def _module_scope(flow: FlowAnalysis) -> Scope:
    return next(s for s in flow.index.scopes if s.kind == "module")


__all__ = ["definition_symbol", "definition_symbols"]
