"""Branches a call does not take: code under a flag parameter that the call leaves ``None`` or ``False``.

A helper's summary (:meth:`promptcache.lint.call_taint.CallTaint.bind_params`) holds the sources of all its branches;
at one call, those under ``if flag:`` (or in the ``x if flag else y`` arm the flag selects) do not run when the call
passes the flag false, so they are not that call's (langroid's ``usage_examples(random=False)``, onyx's date-or-minute
helper; issue 11).
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.expressions import argument
from promptcache.lint.index import Scope
from promptcache.lint.sources import Source
from promptcache.lint.value_syntax import guard_flag
from promptcache.lint.walk import ancestors, descendants


def switched_off(parents: dict, s: Source, callee: Scope, call: cst.Call, offset: int) -> bool:
    """``s`` starts inside ``if flag:`` of a parameter ``flag`` that ``call`` passes as ``None`` or ``False``
    (or leaves at such a default) and the function never rebinds: that branch does not run for this call (langroid's
    ``usage_examples(random=False)`` picks an example with ``random.choice`` only when asked; issue 11)."""
    flag = guard_flag(s.guard)[0] if s.guard is not None else None
    if flag is not None and isinstance(callee.node, cst.FunctionDef) and flag in callee.params \
            and _home(parents, s.guard) is callee.node and none_at(call, callee.params.index(flag), offset, callee):
        return True  # the `x if flag else y` arm this call does not take (TaintEngine._guarded)
    node = s.origin
    if node is None or not isinstance(callee.node, cst.FunctionDef):
        return False
    if _home(parents, node) is not callee.node:
        return False  # read in another function (a helper with its own `precise`): not this call's branch
    child, parent = node, parents.get(node)
    while parent is not None and parent is not callee.node:
        if isinstance(parent, cst.If) and child is parent.body and isinstance(parent.test, cst.Name) \
                and parent.test.value in callee.params \
                and all(b.kind == "param" for b in callee.bindings.get(parent.test.value, ())) \
                and none_at(call, callee.params.index(parent.test.value), offset, callee):
            return True
        child, parent = parent, parents.get(parent)
    return False


def _home(parents: dict, node: cst.CSTNode) -> cst.CSTNode | None:
    """The function or lambda ``node`` is in (None at module level)."""
    return next((anc for anc in ancestors(parents, node) if isinstance(anc, (cst.FunctionDef, cst.Lambda))), None)


def none_at(call: cst.Call, index: int, offset: int, callee: Scope) -> bool:
    """The call passes ``None`` or ``False`` for ``callee.params[index]`` (``offset``: a bound ``self``): written,
    or left at such a default."""
    if not 0 <= index < len(callee.params) or not isinstance(callee.node, cst.FunctionDef):
        return False
    name = callee.params[index]
    arg = argument(call, index - offset, name)
    if arg is None:
        if any(a.star for a in call.args):
            return False
        param = next((p for p in descendants(callee.node.params, cst.Param) if p.name.value == name), None)
        arg = param.default if param is not None else None
    return isinstance(arg, cst.Name) and arg.value in ("None", "False")


__all__ = ["none_at", "switched_off"]
