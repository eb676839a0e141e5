"""Order carried by iteration: a loop's order reaching the list it fills, and a parameter typed as a set.

``for name in names: tools.append(SPECS[name])`` fills ``tools`` in the order ``names`` iterates, as
``[SPECS[n] for n in names]`` does; a parameter annotated ``set[str]`` / ``frozenset`` / ``AbstractSet``
iterates in hash order (issue 11 review, section 5).

The element a ``for`` statement binds carries no order while its iteration uses it: a request sent per listed
folder with that folder's own tools is the same request whatever the listing order (swarm, blind set 15). The
order reaches what the loop fills (:func:`filling_loops`) and what leaves the loop as one picked element
(:func:`picking_loops`: ``first = t; break``, ``return t``). A mapping filled or built by iterating keeps that
order as its *key* order (:attr:`Source.key_order`: :func:`keyed_store`, :func:`key_ordered`), which a value read
by key (``defs[name]``) does not have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import int_value
from promptcache.lint.index import Binding
from promptcache.lint.walk import descendants

_SET_TYPES = frozenset({"set", "frozenset", "Set", "FrozenSet", "AbstractSet", "MutableSet"})


def loop_locals(loop: cst.For) -> set[str]:
    """The names ``loop`` binds on each iteration: its target, and the names its body binds (``=``, ``:=``,
    ``with ... as``, ``except ... as``, an inner ``for``)."""
    local = {n.value for n in descendants(loop.target, cst.Name)}
    for node in descendants(loop.body, (cst.AssignTarget, cst.AnnAssign, cst.NamedExpr, cst.AsName, cst.For)):
        target = node.name if isinstance(node, cst.AsName) else node.target
        local |= {n.value for n in descendants(target, cst.Name)}
    return local


def body_loops(node: cst.CSTNode, parents: dict) -> Iterator[cst.For]:
    """The ``for`` statements whose body holds ``node``, innermost first, up to its function."""
    child, up = node, parents.get(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.ClassDef, cst.Module, cst.Lambda)):
        if isinstance(up, cst.For) and child is up.body:
            yield up
        child, up = up, parents.get(up)


def in_body(node: cst.CSTNode, loop: cst.For, parents: dict) -> bool:
    """``node`` is in ``loop``'s body (run once per element), not its target, iterable or ``else``."""
    return any(found is loop for found in body_loops(node, parents))


def filling_loops(b: Binding, name: str, parents: dict) -> list[cst.For]:
    """The ``for`` loops whose body fills the list ``name`` once per element, innermost first: the loops whose
    iteration order becomes the list's order. A fill is ``xs.append(v)`` (a ``mutate`` binding), ``xs += [v]``, or
    ``xs = xs + [v]`` / ``[*xs, v]`` (rebinding ``xs`` from itself, not through ``sorted()``); ``v`` reads a name
    the loop binds (:func:`loop_locals`), outside a comprehension's ``if`` (``[t for t in xs if t != n]`` filters
    and keeps ``xs``'s order). A loop variable read in its loop carries no order itself (:func:`as_read`)."""
    if b.value is None or b.kind not in ("mutate", "aug", "assign"):
        return []
    read = _reads(b.value)
    if b.kind == "assign" and (name not in read or _sorted_call(b.value)):
        return []  # `spec = {...}` is one value; `xs = sorted(xs + [v])` is ordered
    return [loop for loop in body_loops(b.node, parents)
            if loop_locals(loop) & (read - {name}) and not _made_in(loop, name)]


def _made_in(loop: cst.For, name: str) -> bool:
    """``loop``'s body binds ``name`` to a new value (``config = json.load(f)``, not ``xs = xs + [v]``): what is
    stored into it is kept for one iteration, not filled across them (swarm, blind set 15)."""
    for node in descendants(loop.body, (cst.Assign, cst.AnnAssign, cst.For, cst.AsName)):
        if isinstance(node, cst.Assign):
            targets, value = [t.target for t in node.targets], node.value
        elif isinstance(node, cst.AnnAssign):
            targets, value = [node.target], node.value
        else:
            targets, value = [node.target if isinstance(node, cst.For) else node.name], None
        if any(isinstance(t, cst.Name) and t.value == name for t in targets) and \
                (value is None or name not in _reads(value)):
            return True
    return False


def picking_loops(node: cst.CSTNode, value: cst.CSTNode, read: cst.Name | None, parents: dict) -> list[cst.For]:
    """The ``for`` loops around ``node`` (a binding statement, or a ``return``) that ``read`` (a read of the name
    bound) is not in, whose names ``value`` reads: a value made in an iteration and used after the loop (``first =
    t; break``) or returned from it (``for ex in examples: return ex``) is one element picked by the loop's order.
    Not a value built from the name itself (``tools = [t for t in tools if ...]``: :func:`filling_loops` judges it)."""
    names = _reads(value)
    if read is not None and read.value in names:
        return []
    return [loop for loop in body_loops(node, parents)
            if (read is None or not in_body(read, loop, parents)) and loop_locals(loop) & names
            and not _looked_up(node, loop, parents)]


def _looked_up(node: cst.CSTNode, loop: cst.For, parents: dict) -> bool:
    """``node`` runs only for the element that matches a key (``if a.name == name: return a``, or after a guard
    ``if a.name != name: continue``): the element is found by its content, whatever the order (swarm's
    ``get_assistant``, blind set 15). A test that is not an equality (``if t:``, ``if len(t) < 9:``) picks the
    first element that passes, in the loop's order."""
    local = loop_locals(loop)
    child, up = node, parents.get(node)
    while up is not None and up is not loop:
        if isinstance(up, cst.If) and child is up.body and _matches_key(up.test, local, ("Equal", "Is", "In")):
            return True
        if isinstance(up, cst.IndentedBlock) and parents.get(up) is loop:  # a guard clause earlier in the loop body
            for stmt in up.body:
                if stmt is child:
                    break
                if isinstance(stmt, cst.If) and _matches_key(stmt.test, local, ("NotEqual", "IsNot", "NotIn")) \
                        and _ends_with_continue(stmt.body):
                    return True
        child, up = up, parents.get(up)
    return False


def _matches_key(test: cst.BaseExpression, local: set[str], operators: tuple[str, ...]) -> bool:
    """``test`` compares something the loop binds with one of ``operators`` (``a["name"] == name``)."""
    return any(any(type(c.operator).__name__ in operators for c in cmp.comparisons)
               and {n.value for n in descendants(cmp, cst.Name)} & local
               for cmp in descendants(test, cst.Comparison))


def _ends_with_continue(body: cst.BaseSuite) -> bool:
    statements = body.body
    last = statements[-1] if statements else None
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], cst.Continue)
    return False


def loop_order(loops: list[cst.For], of, scope) -> frozenset:
    """The order sources (:data:`~promptcache.lint.sources.ORDER_KINDS`) of ``loops``' iterables; ``of`` is the
    taint engine's ``of(expr, scope)``."""
    return frozenset(s for loop in loops for s in of(loop.iter, scope) if s.kind in S.ORDER_KINDS)


def as_read(b: Binding, read: cst.Name, t: frozenset, of, parents: dict | None) -> frozenset:
    """``t`` (what binding ``b`` gives) as ``read`` sees it. A ``for`` statement's element read in the loop's body
    is one element: no order. A value bound in a loop's body and read after the loop is one element picked by the
    loop's order (:func:`picking_loops`); the lists a loop fills take its order on in the taint engine's bindings
    (:func:`filling_loops`)."""
    if parents is None:
        return t
    if b.kind == "for" and isinstance(b.node, cst.For):
        return frozenset(s for s in t if s.kind not in S.ORDER_KINDS) if in_body(read, b.node, parents) else t
    if b.kind in ("assign", "walrus", "aug", "with") and b.value is not None \
            and not any(read.value in loop_locals(loop) for loop in body_loops(read, parents)):
        # (a read in a loop that binds the name itself sees that iteration's value: `with open(f) as file` in
        # two loops in a row, swarm)
        return t | loop_order(picking_loops(b.node, b.value, read, parents), of, b.scope)
    return t


def key_ordered(t: frozenset, iterables: frozenset) -> frozenset:
    """``t`` (a mapping built by iterating ``iterables``: a dict comprehension, ``dict(pairs)``) with the order
    sources of the iteration marked :attr:`Source.key_order`: they order its keys, not a value read by key."""
    keyed = {s for s in iterables if s.kind in S.ORDER_KINDS}
    return frozenset(dataclasses.replace(s, key_order=True) if s in keyed else s for s in t) if keyed else t


def iterables(comp: cst.BaseExpression) -> list[cst.BaseExpression]:
    """A comprehension's iterables (``for ... in X``, nested ones too)."""
    out, at = [], comp.for_in
    while at is not None:
        out.append(at.iter)
        at = at.inner_for_in
    return out


def update_call(node: cst.CSTNode) -> bool:
    """``d.update({...})``: a mapping filled key by key."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "update"


def keyed_store(stmt: cst.CSTNode, name: str) -> bool:
    """``stmt`` stores into ``name[key]`` by a key that is not an integer (``defs[spec["name"]] = spec``): the loop
    around it orders the mapping's keys (:attr:`Source.key_order`), not the value stored."""
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else \
        [stmt.target] if isinstance(stmt, cst.AnnAssign) else []
    return any(isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name
               and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index)
               and int_value(t.slice[0].slice.value) is None for t in targets)


def _reads(value: cst.CSTNode) -> set[str]:
    ifs = {id(n) for c in descendants(value, cst.CompIf) for n in descendants(c, cst.Name)}
    return {n.value for n in descendants(value, cst.Name) if id(n) not in ifs}


def _sorted_call(value: cst.CSTNode) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "sorted"


def set_annotation(param: cst.CSTNode) -> bool:
    """A parameter annotated as a set (``enabled: set[str]``, ``typing.AbstractSet[str]``, ``frozenset``)."""
    ann = param.annotation.annotation if isinstance(param, cst.Param) and param.annotation is not None else None
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    if isinstance(ann, cst.Attribute):
        return ann.attr.value in _SET_TYPES
    return isinstance(ann, cst.Name) and ann.value in _SET_TYPES


def set_valued(expr: cst.BaseExpression, index, scope) -> bool:
    """``expr`` holds a set itself (not a sequence built from one): a set literal or comprehension, a ``set()`` /
    ``frozenset()`` call, or a name every binding of which is one of those or is annotated as a set."""
    if isinstance(expr, (cst.Set, cst.SetComp)):
        return True
    if isinstance(expr, cst.Call):
        return index.qualified(expr.func, scope) in ("set", "frozenset")
    if not isinstance(expr, cst.Name):
        return False
    bindings = index.bindings_of(expr, scope)
    if not bindings:
        return False
    for b in bindings:
        ann = b.node.annotation.annotation if isinstance(b.node, (cst.AnnAssign, cst.Param)) and b.node.annotation else None
        if isinstance(ann, cst.Subscript):
            ann = ann.value
        if isinstance(ann, (cst.Name, cst.Attribute)) and (ann.value if isinstance(ann, cst.Name) else ann.attr.value) in _SET_TYPES:
            continue
        if b.kind in ("assign", "walrus") and b.element < 0 and b.value is not None and not isinstance(b.value, cst.Name) \
                and set_valued(b.value, index, b.scope):
            continue
        return False
    return True
