"""Order carried by iteration: a loop's order reaching the list it fills, and a parameter typed as a set.

``for name in names: tools.append(SPECS[name])`` fills ``tools`` in the order ``names`` iterates, as
``[SPECS[n] for n in names]`` does; a parameter annotated ``set[str]`` / ``frozenset`` / ``AbstractSet``
iterates in hash order (issue 11 review, section 5).
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.index import Binding
from promptcache.lint.walk import descendants

_SET_TYPES = frozenset({"set", "frozenset", "Set", "FrozenSet", "AbstractSet", "MutableSet"})


def filling_loops(b: Binding, name: str, parents: dict) -> list[cst.For]:
    """The ``for`` loops around a fill of the list ``name``, innermost first, up to the binding's function, that fill it once
    per element: the loops whose iteration order becomes the list's order. A fill is ``xs.append(v)`` (a
    ``mutate`` binding), ``xs += [v]``, or ``xs = xs + [v]`` / ``[*xs, v]`` (rebinding ``xs`` from itself); ``v``
    reads the loop's target or a name bound in the loop's body (``spec = SPECS[n]`` then ``tools.append(spec)``).
    The loop variable itself carries no order (:meth:`TaintEngine._binding`): one element has none."""
    if b.value is None or b.kind not in ("mutate", "aug", "assign"):
        return []
    read = {n.value for n in descendants(b.value, cst.Name)}
    if b.kind == "assign" and name not in read:
        return []  # not an accumulation: `spec = {...}` is one value
    out: list[cst.For] = []
    node = parents.get(b.node)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(node, cst.For):
            local = {n.value for n in descendants(node.target, cst.Name)}
            local |= {n.value for t in descendants(node.body, cst.AssignTarget) for n in descendants(t, cst.Name)}
            if local & (read - {name}):
                out.append(node)
        node = parents.get(node)
    return out


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
