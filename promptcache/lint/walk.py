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
# What a field value is, by its type: 1 a node, 2 a tuple or list (of nodes, maybe), 0 anything else.
# A dict lookup on the exact type instead of ``isinstance(value, cst.CSTNode)``: CSTNode is an ABC, whose
# isinstance check costs about ten times a dict lookup, and the walk asks it for every field of every node.
_KIND: dict[type, int] = {}


def _child_fields(tp: type) -> tuple[str, ...]:
    names = _FIELDS.get(tp)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(tp) if not f.name.startswith(_SKIP_PREFIXES)
        )
        _FIELDS[tp] = names
    return names


def _kind(tp: type) -> int:
    kind = _KIND.get(tp)
    if kind is None:
        kind = _KIND[tp] = 1 if issubclass(tp, cst.CSTNode) else 2 if issubclass(tp, (tuple, list)) else 0
    return kind


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of ``node`` in source order (no whitespace nodes), as a list."""
    out: list[cst.CSTNode] = []
    for name in _FIELDS.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        kind = _KIND.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == 1:
            out.append(value)
        elif kind == 2:
            for item in value:
                item_kind = _KIND.get(type(item))
                if item_kind == 1 or (item_kind is None and _kind(type(item)) == 1):
                    out.append(item)
    return out


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Yield the syntactic children of ``node`` in source order (no whitespace nodes)."""
    yield from children(node)


# types asked for -> {node type: whether it is one of them}. ``isinstance`` against libcst's classes goes through
# ABCMeta.__instancecheck__ (a Python call); the node types met are few, so each answer is computed once.
_MATCHES: dict[type | tuple[type, ...], dict[type, bool]] = {}


def descendants(node: cst.CSTNode | None, types: type | tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """Yield ``node`` and its descendants that are instances of ``types`` (not looking into lambdas)."""
    stack = [node] if node is not None else []
    matches = _MATCHES.get(types)
    if matches is None:
        matches = _MATCHES[types] = {}
    while stack:
        current = stack.pop()
        tp = type(current)
        hit = matches.get(tp)
        if hit is None:
            hit = matches[tp] = issubclass(tp, types)
        if hit:
            yield current
        if tp is not cst.Lambda:
            stack.extend(children(current))


def ancestors(parent: dict[cst.CSTNode, cst.CSTNode], node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Yield the parent, grandparent, ... of ``node`` in a walk's parent map (:attr:`TreeFacts.parent`), up to the
    Module."""
    up = parent.get(node)
    while up is not None:
        yield up
        up = parent.get(up)


class TreeFacts:
    """What the walk learns about every node: its parent, its pre-order index and its type.

    ``order[node]`` increases in source order, so two nodes can be compared for
    "which comes first" without computing line numbers. ``of_type(cst.Name)``
    lists the nodes of exactly that type in source order: a pass over one kind
    of node need not visit them all.
    """

    __slots__ = ("parent", "order", "by_type")

    def __init__(self) -> None:
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self.by_type: dict[type, list[cst.CSTNode]] = {}

    def of_type(self, *types: type) -> list[cst.CSTNode]:
        """The walked nodes whose type is one of ``types`` exactly (not subclasses), type by type, each in
        source order."""
        if len(types) == 1:
            return self.by_type.get(types[0], [])
        return [node for tp in types for node in self.by_type.get(tp, ())]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Yield the parent, grandparent, ... up to the Module."""
        return ancestors(self.parent, node)

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


# (visitor classes, node type) -> the positions of the visitors that have a visit_ / leave_ callback for it.
# Shared by every file of a run: the same rule classes meet the same node types file after file.
_CALLBACKS: dict[tuple[tuple[type, ...], type], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def _dispatch_table(visitors: Sequence[object]):
    cache: dict[type, tuple[tuple, tuple]] = {}
    classes = tuple(type(v) for v in visitors)

    def lookup(tp: type) -> tuple[tuple, tuple]:
        name = tp.__name__
        found = _CALLBACKS.get((classes, tp))
        if found is None:
            found = _CALLBACKS[(classes, tp)] = (
                tuple(i for i, v in enumerate(visitors) if getattr(v, "visit_" + name, None) is not None),
                tuple(i for i, v in enumerate(visitors) if getattr(v, "leave_" + name, None) is not None),
            )
        visits = tuple(getattr(visitors[i], "visit_" + name) for i in found[0])
        leaves = tuple(getattr(visitors[i], "leave_" + name) for i in found[1])
        entry = cache[tp] = (visits, leaves)
        return entry

    return cache, lookup


def walk(module: cst.Module, visitors: Sequence[object], facts: TreeFacts | None = None) -> TreeFacts:
    """Walk ``module`` once, calling every visitor's callbacks; return the tree facts.

    ``facts`` may be passed in so visitors can read parents during the walk
    (a node's parent is known before the node is visited). A ``visit_*``
    return value is ignored: the batch shares one traversal.
    """
    facts = facts if facts is not None else TreeFacts()
    parent_of = facts.parent
    order = facts.order
    by_type = facts.by_type
    cache, lookup = _dispatch_table(visitors)
    # Entries are nodes to visit, or (node, leaves) pairs to leave: a node is pushed for leaving only when
    # some visitor has a leave_ callback for its type (the callbacks run in the same order either way).
    stack: list = [module]
    counter = 0
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is tuple:
            for leave in node[1]:
                leave(node[0])
            continue
        tp = type(node)
        entry = cache.get(tp) or lookup(tp)
        order[node] = counter
        counter += 1
        same = by_type.get(tp)
        if same is None:
            same = by_type[tp] = []
        same.append(node)
        for visit in entry[0]:
            visit(node)
        if entry[1]:
            push((node, entry[1]))
        for child in reversed(children(node)):
            parent_of[child] = node
            push(child)
    return facts
