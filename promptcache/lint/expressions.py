"""Syntactic facts about one expression, shared by the taint engine and the rules.

Whether a string literal adds static text (judged on its decoded value),
whether an expression is a constant written in the source, whether a call is
a dict view (``d.keys()``), the identifier-like text of a string key, and
which argument of a call binds a given parameter. Nothing here follows names.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.dict_view import entry, string_key
from promptcache.lint.literals import PLACEHOLDER, pieces

_ALNUM = re.compile(r"[A-Za-z0-9]")


def has_text(node: cst.CSTNode) -> bool:
    """True for a string literal (or f-string) with letters or digits in its decoded static text.

    The value is judged, not the source: ``"\\n"`` is a line break, not the letter n, so
    ``system + "\\n"`` and ``"\\n\\n".join(parts)`` add no static text.
    """
    return any(_ALNUM.search(p.value.replace(PLACEHOLDER, "")) for p in pieces(node)) if isinstance(node, cst.BaseString) else False


def is_dict_view(node: cst.BaseExpression) -> bool:
    """``x.keys()`` / ``x.items()``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and S.dict_view(node.func.attr.value) and not node.args


def key_text(node: cst.BaseExpression) -> str | None:
    """The identifier-like text of a string key (``"x-request-id"`` gives ``x_request_id``), else None."""
    key = string_key(node)
    return key.replace("-", "_") if key is not None else None


_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary)


def evaluated(text: str, missing=None):
    """The Python value of a literal's source ``text`` (``ast.literal_eval``), or ``missing`` when it is not one."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return missing


# String methods whose result does not change when applied again (`x.strip().strip() == x.strip()`).
IDEMPOTENT_METHODS = frozenset({"strip", "rstrip", "lstrip", "lower", "upper", "casefold"})


def is_literal(node: cst.BaseExpression | None) -> bool:
    """A constant written in the source: a string, a number, True/False/None, or a container of them."""
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(el, cst.Element) and is_literal(el.value) for el in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(el, cst.DictElement) and is_literal(el.key) and is_literal(el.value) for el in node.elements)
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    return isinstance(node, _LITERALS)


def last_name(e: cst.BaseExpression) -> str:
    """The last name of a dotted expression: ``self.client.get_tools`` gives ``get_tools``, ``Tool`` gives
    ``Tool``; ``""`` for anything else (a call, a subscript)."""
    return e.attr.value if isinstance(e, cst.Attribute) else e.value if isinstance(e, cst.Name) else ""


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument expression bound to parameter ``position`` / ``keyword`` of a call."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg.value
            continue
        if arg.star:
            return None
        if positional == position:
            return arg.value
        positional += 1
    return None


def variadic_arguments(call: cst.Call, func: cst.CSTNode, name: str, offset: int = 0) -> list[cst.BaseExpression]:
    """The argument expressions a call packs into ``func``'s ``*args`` / ``**kwargs`` parameter ``name``: the
    positional arguments past the named ones, or the keywords no named parameter takes (``**mapping`` spreads
    too); ``offset`` counts a bound ``self``. Empty when ``name`` is neither."""
    if not isinstance(func, cst.FunctionDef):
        return []
    p = func.params
    named = [*p.posonly_params, *p.params]
    if isinstance(p.star_kwarg, cst.Param) and p.star_kwarg.name.value == name:
        taken = {q.name.value for q in [*named, *p.kwonly_params]}
        return [a.value for a in call.args if a.keyword is not None and a.keyword.value not in taken or a.star == "**"]
    if isinstance(p.star_arg, cst.Param) and p.star_arg.name.value == name:
        extra = [a.value for a in call.args if a.keyword is None and a.star != "**"]
        return extra[max(len(named) - offset, 0):]
    return []


def int_value(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal (``3``, ``-1``), or None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def is_system_dict(node: cst.BaseExpression) -> bool:
    """A ``{"role": "system" | "developer", ...}`` message literal (or an SDK param call such as
    ``ChatCompletionSystemMessageParam(role="system", ...)``: :mod:`promptcache.lint.dict_view`)."""
    role = entry(node, "role")
    return isinstance(role, cst.SimpleString) and role.value[1:-1] in ("system", "developer")
