"""One fast, batched walk over a libcst tree.

libcst's own ``Module.visit`` rebuilds every node while it visits (about a
third of the parse cost again on the standard library), so the engine walks
the tree itself: children are read from each node's dataclass fields (cached
per node type, whitespace and punctuation fields skipped), with an explicit
stack so deeply nested expressions cannot hit the recursion limit.

Every visitor in the batch gets Fixit/libcst-style callbacks,
``visit_<NodeType>(node)`` on the way down and ``leave_<NodeType>(node)`` on
the way up, in the order the visitors were given: one walk serves the module
indexer and all rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import libcst as cst

# Fields that only hold whitespace, comments, brackets or operator tokens.
_SKIP_PREFIXES = (
    "whitespace",
    "lpar",
    "rpar",
    "leading_lines",
    "lines_after",
    "header",
    "footer",
    "comma",
    "semicolon",
    "colon",
    "equal",
    "dot",
    "operator",
    "lbracket",
    "rbracket",
    "lbrace",
    "rbrace",
    "newline",
    "trailing_whitespace",
    "empty_lines",
    "first_line",
    "relative",
    "asynchronous",
    "first_colon",
    "second_colon",
)

_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(tp: type) -> tuple[str, ...]:
    names = _FIELDS.get(tp)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(tp) if not f.name.startswith(_SKIP_PREFIXES)
        )
        _FIELDS[tp] = names
    return names


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Yield the syntactic children of ``node`` in source order (no whitespace nodes)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def descendants(node: cst.CSTNode | None, types: type | tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """Yield ``node`` and its descendants that are instances of ``types`` (not looking into lambdas)."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, types):
            yield current
        if not isinstance(current, cst.Lambda):
            stack.extend(iter_children(current))


class TreeFacts:
    """What the walk learns about every node: its parent and its pre-order index.

    ``order[node]`` increases in source order, so two nodes can be compared for
    "which comes first" without computing line numbers.
    """

    __slots__ = ("parent", "order")

    def __init__(self) -> None:
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Yield the parent, grandparent, ... up to the Module."""
        parent = self.parent.get(node)
        while parent is not None:
            yield parent
            parent = self.parent.get(parent)

    def within(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        """True when ``node`` is ``outer`` or inside it."""
        return node is outer or any(anc is outer for anc in self.ancestors(node))

    def loop_of(self, node: cst.CSTNode, cross_functions: bool = False) -> cst.CSTNode | None:
        """The innermost ``for`` / ``while`` holding ``node``, in its own function unless ``cross_functions``;
        None when there is none."""
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.For, cst.While)):
                return anc
            if not cross_functions and isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                return None
        return None


def _dispatch_table(visitors: Sequence[object]):
    cache: dict[type, tuple[tuple, tuple]] = {}

    def lookup(tp: type) -> tuple[tuple, tuple]:
        entry = cache.get(tp)
        if entry is None:
            name = tp.__name__
            visits = tuple(
                m for v in visitors if (m := getattr(v, "visit_" + name, None)) is not None
            )
            leaves = tuple(
                m for v in visitors if (m := getattr(v, "leave_" + name, None)) is not None
            )
            entry = cache[tp] = (visits, leaves)
        return entry

    return lookup


def walk(module: cst.Module, visitors: Sequence[object], facts: TreeFacts | None = None) -> TreeFacts:
    """Walk ``module`` once, calling every visitor's callbacks; return the tree facts.

    ``facts`` may be passed in so visitors can read parents during the walk
    (a node's parent is known before the node is visited). A ``visit_*``
    return value is ignored: the batch shares one traversal.
    """
    facts = facts if facts is not None else TreeFacts()
    parent_of = facts.parent
    order = facts.order
    lookup = _dispatch_table(visitors)
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    counter = 0
    while stack:
        node, leaving = stack.pop()
        visits, leaves = lookup(type(node))
        if leaving:
            for leave in leaves:
                leave(node)
            continue
        order[node] = counter
        counter += 1
        for visit in visits:
            visit(node)
        stack.append((node, True))
        children = list(iter_children(node))
        for child in reversed(children):
            parent_of[child] = node
            stack.append((child, False))
    return facts
