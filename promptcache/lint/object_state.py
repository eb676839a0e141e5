"""Attributes fixed per object: bound in ``__init__`` or the class body, or only cleaned up from their own value.

``self.config`` read in a guard (TaskWeaver's ``if not self.config.support_system_role``) or
``self.compressed_summary`` read into a system prompt (DocsGPT) holds what the object was built with; it does not
change between the object's requests (issue 11). Used by the normalising-store exclusion of PC204
(:mod:`promptcache.lint.normalising_edits`), by summary taint (:mod:`promptcache.lint.taint`) and by PC102's reading
of ``__init__`` parameters (:mod:`promptcache.lint.dataflow`, :func:`built_per_call`).
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.expressions import IDEMPOTENT_METHODS, is_literal
from promptcache.lint.index import Binding, ClassInfo, ModuleIndex
from promptcache.lint.walk import descendants


def set_up(cls: ClassInfo, attr: str, index: ModuleIndex | None = None) -> bool:
    """``self.attr`` of ``cls`` is bound, and only in ``__init__`` or the class body, or cleaned up from its own
    value elsewhere (:func:`_from_itself`): a value fixed per object (a setting, or what the object was built with).
    With ``index``, also written by no ``obj.attr = ...`` of the module on another object than a method's ``self``
    (``AGENT.summary = summarize(h)`` in a request handler)."""
    bindings = cls.attrs.get(attr, [])
    return bool(bindings) and all(b.scope.name == "__init__" or b.scope is cls.scope
                                  or _from_itself(b, attr) for b in bindings) \
        and not (index is not None and _written_from_outside(cls, index, attr))


def set_per_object(index: ModuleIndex, parent: dict | None, cls: ClassInfo, attr: str) -> bool:
    """``self.attr`` is bound in ``__init__`` (and nowhere else but the class body: :func:`set_up`) and the module
    does not build ``cls`` objects for one call each (:func:`built_per_call`): a clock read there changes once per
    object. ``parent``: the walk's parent map (None: not known, so not judged)."""
    return parent is not None and any(b.scope.name == "__init__" for b in cls.attrs.get(attr, ())) \
        and set_up(cls, attr, index) and not built_per_call(index, parent, cls)


def _written_from_outside(cls: ClassInfo, index: ModuleIndex, attr: str) -> bool:
    """Some ``obj.attr = ...`` of the module writes ``attr`` on an object of ``cls`` other than a method's own
    ``self``: a name bound to ``cls(...)`` (``AGENT = Agent([])`` then ``AGENT.summary = ...``). Another class's
    ``record.summary = note`` does not count."""
    for store in index.stores:
        t = store.target
        if isinstance(t, cst.Attribute) and t.attr.value == attr and isinstance(t.value, cst.Name) \
                and t.value.value != store.scope.self_name and _instance_of(index, t.value, store.scope, cls):
            return True
    return False


def _instance_of(index: ModuleIndex, name: cst.Name, scope, cls: ClassInfo) -> bool:
    """``name`` is bound to a call of ``cls`` (``AGENT = Agent([])``)."""
    return any(b.kind in ("assign", "walrus") and isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Name)
               and b.value.func.value == cls.name for b in index.lookup(name.value, scope)[1])


def built_per_call(index: ModuleIndex, parent: dict, cls: ClassInfo) -> bool:
    """The module builds objects of ``cls`` for one call each: ``Tutor(req.topic).ask(req.q)``, or ``t =
    Tutor(req.topic)`` in a function that then calls ``t.<method>(...)`` and neither returns ``t`` nor hands it on
    whole. What such an object was built with is per request, not per object (issue 11 review).
    ``parent``: the walk's parent map."""
    return any(_for_one_call(index, parent, call, scope) for call, scope in index.calls
               if isinstance(call.func, cst.Name) and call.func.value == cls.name)


def _for_one_call(index: ModuleIndex, parent: dict, call: cst.Call, scope, depth: int = 0) -> bool:
    """The object ``call`` makes serves one call: a method called on it at once, or on the name it is bound to
    (:func:`_used_once_here`), or it is returned by a factory whose calls are so used (``make_agent(h).ask(q)``)."""
    up = parent.get(call)
    if isinstance(up, cst.Attribute) and isinstance(parent.get(up), cst.Call):
        return True
    target = up.targets[0].target if isinstance(up, cst.Assign) and len(up.targets) == 1 else None
    if scope.kind == "function" and isinstance(target, cst.Name) and _used_once_here(scope.node, target.value, parent):
        return True
    if isinstance(up, cst.Return) and scope.kind == "function" and depth < 2:
        return any(_for_one_call(index, parent, c, s, depth + 1) for c, s in index.calls
                   if index.function_named(c.func, s) is scope)
    return False


def _used_once_here(func: cst.CSTNode, name: str, parent: dict) -> bool:
    """In ``func``, a method of ``name`` is called, and ``name`` is not returned, stored or yielded whole (given to a
    call as an argument, ``log(agent)``, it may outlive the call; the object was still made for this one)."""
    called = False
    for n in descendants(func, cst.Name):
        if n.value != name:
            continue
        up = parent.get(n)
        if isinstance(up, cst.Attribute) and up.value is n:
            called = called or isinstance(parent.get(up), cst.Call)
        elif isinstance(up, (cst.Return, cst.Element, cst.DictElement, cst.Yield)) \
                or isinstance(up, cst.Assign) and up.value is n:
            return False
    return called


def _from_itself(b: Binding, attr: str) -> bool:
    """``b`` cleans ``self.attr`` up idempotently: ``self.attr.strip()`` (:data:`IDEMPOTENT_METHODS`, literal
    arguments), or ``self.attr if <test of self.attr> else <literal>`` (sweep's
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
    if isinstance(v, cst.IfExp):  # not two different cleanups (`.upper() if ... else .lower()` flips it), not two literals
        flips = cleaned(v.body) and cleaned(v.orelse) and v.body.func.attr.value != v.orelse.func.attr.value
        return kept(v.body) and kept(v.orelse) and reads_itself_only(v.test) and not flips \
            and not (is_literal(v.body) and is_literal(v.orelse))
    return cleaned(v)


__all__ = ["built_per_call", "set_up"]
