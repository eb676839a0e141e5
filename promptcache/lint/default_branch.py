"""The one branch of ``a if flag else b`` a module can reach: ``flag`` a parameter left at its default.

``now.strftime("%B %d, %Y %H:%M") if include_hour_min else now.strftime("%B %d, %Y")`` with
``include_hour_min: bool = False``: when no call in the module passes the parameter, the only value the module
shows is its default (``True``, ``False`` or ``None``), so only the branch that default selects is graded (the
date, once a day, not the clock: onyx's ``get_current_day``, onyx review #5). The same reading as
:meth:`promptcache.lint.call_sites.CallSites.default_only` gives a parameter in PC102.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.expressions import argument
from promptcache.lint.index import ModuleIndex, Scope

_DEFAULTS = {"True": True, "False": False, "None": False}


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
