"""The one branch of ``a if flag else b`` a module can reach: ``flag`` a parameter left at its default.

``now.strftime("%B %d, %Y %H:%M") if include_hour_min else now.strftime("%B %d, %Y")`` with
``include_hour_min: bool = False``: when no call in the module passes the parameter, the only value the module
shows is its default (``True``, ``False`` or ``None``), so only the branch that default selects is graded (the
date, once a day, not the clock: onyx's ``get_current_day``, onyx review #5). The same reading as
:meth:`promptcache.lint.call_sites.CallSites.default_only` gives a parameter in PC102.

:func:`dead_binding` extends this to statements: the body of ``if param:`` / ``if param is not None:`` is dead
when the module calls the function at least once and every call passes ``param`` as the literal ``None`` or
``False`` (or omits it with a ``None``/``False`` default), never through ``*args``/``**kwargs``, and nothing
reassigns it; a binding made inside that body then reaches no later read (onyx review #7: a schema's
placeholder substitution under ``if dynamic_schema_info:``, whose only call, a ``__main__`` demo, passes
``None``). A module with no call, or one call with any other value, keeps the body live.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.expressions import argument
from promptcache.lint.index import ModuleIndex, Scope

_DEFAULTS = {"True": True, "False": False, "None": False}
_FALSY = ("None", "False")


def default_branch(e: cst.IfExp, index: ModuleIndex, scope: Scope) -> cst.BaseExpression | None:
    """The branch of ``e`` its test's parameter default selects, when the test is a parameter (or ``not`` one)
    of a function no call in the module passes it to (nor ``*args``/``**kwargs``), and nothing reassigns it;
    else None (both branches can run)."""
    test, negated = e.test, False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    if not isinstance(test, cst.Name):
        return None
    func, bindings = index.lookup(test.value, scope)
    if func is None or func.kind != "function" or len(bindings) != 1 or bindings[0].kind != "param":
        return None
    default = bindings[0].value
    if not isinstance(default, cst.Name) or default.value not in _DEFAULTS:
        return None
    position = bindings[0].index - (1 if func.self_name is not None else 0)
    for call, call_scope in index.calls:
        if index.function_named(call.func, call_scope) is not func:
            continue
        bound = position + (0 if isinstance(call.func, cst.Attribute) or func.self_name is None else 1)
        if argument(call, bound, test.value) is not None or any(a.star for a in call.args):
            return None
    return e.body if _DEFAULTS[default.value] != negated else e.orelse


def dead_binding(node: cst.CSTNode, scope: Scope, index: ModuleIndex, parents: dict | None) -> bool:
    """True when ``node`` (a binding's statement) lies in the body of an ``if param:`` / ``if param is not
    None:`` of its function ``scope`` that every visible call turns off (see the module docstring)."""
    if parents is None or scope.kind != "function":
        return False
    child, node = node, parents.get(node)
    while node is not None and node is not scope.node:
        if isinstance(node, cst.If) and child is node.body and _always_off(node.test, scope, index):
            return True
        child, node = node, parents.get(node)
    return False


def _always_off(test: cst.BaseExpression, func: Scope, index: ModuleIndex) -> bool:
    """True when ``test`` is ``param`` / ``param is not None`` and every call of ``func`` passes a falsy literal."""
    falsy = _FALSY
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
            test.comparisons[0].operator, cst.IsNot) and isinstance(test.comparisons[0].comparator, cst.Name) and \
            test.comparisons[0].comparator.value == "None":
        test, falsy = test.left, ("None",)  # `False is not None`: the body runs
    if not isinstance(test, cst.Name):
        return False
    bindings = func.bindings.get(test.value, [])
    if len(bindings) != 1 or bindings[0].kind != "param":
        return False
    default = bindings[0].value
    if default is not None and not (isinstance(default, cst.Name) and default.value in falsy):
        return False
    position = bindings[0].index - (1 if func.self_name is not None else 0)
    seen = False
    for call, call_scope in index.calls:
        if index.function_named(call.func, call_scope) is not func:
            continue
        if any(a.star for a in call.args):
            return False
        bound = position + (0 if isinstance(call.func, cst.Attribute) or func.self_name is None else 1)
        value = argument(call, bound, test.value)
        if value is None and default is None:
            return False
        if value is not None and not (isinstance(value, cst.Name) and value.value in falsy):
            return False
        seen = True
    return seen
