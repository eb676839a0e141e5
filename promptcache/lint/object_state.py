"""Attributes fixed per object: bound in ``__init__`` or the class body, or only cleaned up from their own value.

``self.config`` read in a guard (TaskWeaver's ``if not self.config.support_system_role``) or
``self.compressed_summary`` read into a system prompt (DocsGPT) holds what the object was built with; it does not
change between the object's requests (issue 11). Used by the normalising-store exclusion of PC204
(:mod:`promptcache.lint.normalising_edits`) and by summary taint (:mod:`promptcache.lint.taint`).
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.expressions import IDEMPOTENT_METHODS, is_literal
from promptcache.lint.index import Binding, ClassInfo


def set_up(cls: ClassInfo, attr: str) -> bool:
    """``self.attr`` of ``cls`` is bound, and only in ``__init__`` or the class body, or cleaned up from its own
    value elsewhere (:func:`_from_itself`): a value fixed per object (a setting, or what the object was built with)."""
    bindings = cls.attrs.get(attr, [])
    return bool(bindings) and all(b.scope.name == "__init__" or b.scope is cls.scope
                                  or _from_itself(b, attr) for b in bindings)


def _from_itself(b: Binding, attr: str) -> bool:
    """``b`` cleans ``self.attr`` up idempotently: ``self.attr.strip()`` (``rstrip`` / ``lstrip`` / ``lower`` /
    ``upper``, literal arguments), or ``self.attr if <test of self.attr> else <literal>`` (sweep's
    ``self.summary = self.summary if not self.summary.strip().endswith("_No response_") else ""``). Not
    ``self.n = self.n + 1`` nor ``self.plain = not self.plain``: those change it on every run."""
    me = b.scope.self_name
    if b.kind != "assign" or me is None or b.value is None:
        return False

    def itself(e: cst.BaseExpression) -> bool:
        return isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == me \
            and e.attr.value == attr

    def cleaned(e: cst.BaseExpression) -> bool:
        return isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and itself(e.func.value) \
            and e.func.attr.value in IDEMPOTENT_METHODS and all(is_literal(a.value) for a in e.args)

    def kept(e: cst.BaseExpression) -> bool:  # the value as is, cleaned, or a literal
        return itself(e) or cleaned(e) or is_literal(e) and not isinstance(e, cst.FormattedString)

    def reads_itself_only(e: cst.CSTNode) -> bool:
        if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == me:
            return e.attr.value == attr
        if isinstance(e, cst.Attribute):
            return reads_itself_only(e.value)
        if isinstance(e, cst.Name):
            return e.value in ("None", "True", "False")
        return all(reads_itself_only(c) for c in e.children)
    v = b.value
    if isinstance(v, cst.IfExp):
        return kept(v.body) and kept(v.orelse) and reads_itself_only(v.test) and not (is_literal(v.body) and is_literal(v.orelse))
    return cleaned(v)


__all__ = ["set_up"]
