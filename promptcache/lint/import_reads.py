"""What one file reads of the project modules it imports (a fact of one file, cached with it).

:func:`import_reads` gives the qualified names (as imported: ``.prompts.SYSTEM``,
``app.prompts.Templates.GREETING``, ``app.prompts``) of every read of an
imported name, each read taken with the attribute chain after it
(``prompts.SYSTEM.format`` gives ``app.prompts.SYSTEM.format``). A star import
gives ``m.*``; an import whose name the file never reads (a re-export, an
``__all__`` entry, an unused import) gives the imported name itself, so it counts
as read. Any name counts, prompt-named or not: a module passed whole
(``getattr(prompts, name)``) reads all of it.

The run joins these (:mod:`promptcache.lint.unread_definitions`) to find the
named definitions no file reads. Only names imported from modules that are
neither an LLM SDK nor the standard library are recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.imports import imported_modules, is_external
from promptcache.lint.prompt_places import is_store

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis


def import_reads(flow: FlowAnalysis) -> tuple[str, ...]:
    """The sorted qualified names this file reads from the project modules it imports (see the module docstring)."""
    out: set[str] = set()
    imported: dict[str, list] = {}  # local name -> its import bindings (any scope)
    for node in flow.facts.parent:
        if type(node) is cst.ImportFrom and isinstance(node.names, cst.ImportStar):
            module = imported_modules(node)[0]
            if module.strip(".") and not is_external(module):
                out.add(module + ".*")
    for scope in flow.index.scopes:
        for name, bindings in scope.bindings.items():
            for b in bindings:
                if b.kind == "import" and b.qualified and not is_external(b.qualified):
                    imported.setdefault(name, []).append(b)
    read: set[int] = set()  # the import bindings some read reaches
    for node, parent in flow.facts.parent.items():
        if type(node) is not cst.Name or node.value not in imported or is_store(node, parent):
            continue
        if isinstance(parent, (cst.ImportAlias, cst.Attribute)) and not (isinstance(parent, cst.Attribute) and parent.value is node):
            continue
        scope = flow.scope_at(node)
        bindings = [b for b in flow.index.lookup(node.value, scope)[1] if b.kind == "import"] if scope is not None else []
        if not bindings:
            continue
        use: cst.BaseExpression = node
        while isinstance(flow.facts.parent.get(use), cst.Attribute) and flow.facts.parent[use].value is use:
            use = flow.facts.parent[use]
        if isinstance(flow.facts.parent.get(use), (cst.Import, cst.ImportFrom, cst.ImportAlias)):
            continue  # the import statement itself
        read.update(id(b) for b in bindings)
        qualified = flow.index.qualified(use, scope)
        if qualified:
            out.add(qualified)
    out.update(b.qualified for bindings in imported.values() for b in bindings if id(b) not in read)
    return tuple(sorted(out))


__all__ = ["import_reads"]
