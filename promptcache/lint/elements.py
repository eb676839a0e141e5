"""What a collection of tools holds, for the ``key=`` of PC301's ``sorted(...)`` fix.

``sorted`` fixes the order of an unordered collection only if it can compare
the elements: tool names (strings) sort as they are, tool definitions (dicts)
by their name in the provider's shape (``t["name"]`` for Anthropic and the
OpenAI Responses API, ``t["function"]["name"]`` for OpenAI Chat Completions
and litellm), tool objects by ``t.name``. The wrong key raises at run time
(``sorted({"a", "b"}, key=lambda t: t["name"])`` is a ``TypeError``), so
when the elements cannot be known no edit is offered.

The evidence, strongest first:

1. what the collection is built from: string literals, or names bound to one,
   are tool names; dict literals are tool definitions (their keys give the
   shape); a constructor called with ``name=`` gives objects; anything that
   went through a set is hashable, so it is not a dict;
2. how the collection is used: iterated by a comprehension or a ``for`` loop
   whose variable is a key (``SPECS[n]``, ``{"name": n}``), the elements are
   names; read as ``t.name``, objects; as ``t["name"]`` or
   ``t["function"]["name"]``, dicts of that shape;
3. where it goes: sent as the tools themselves to an SDK call, its elements
   are that SDK's tool definitions (dicts), unless they went through a set.

A collection reported where it is defined (``ENABLED = {"a", "b"}`` at module
level) is wrapped where each tool slot reads it (``sorted(ENABLED)`` in
``[TOOLS[n] for n in ENABLED]``): changing the constant's type to a list
could break its other uses (``ENABLED | extra``). When a set re-orders it on
the way (``{k.lower() for k in ENABLED}``), that set is wrapped instead
(:mod:`promptcache.lint.reads`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint.expressions import key_text, last_name
from promptcache.lint.reads import reads
from promptcache.lint.walk import descendants

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope
    from promptcache.lint.slots import Slot

NAME_KEY = 'lambda t: t["name"]'
FUNCTION_NAME_KEY = 'lambda t: t["function"]["name"]'
ATTRIBUTE_KEY = "lambda t: t.name"
# The tool definition shape of each SDK sink (sinks.Sink.api); extra sinks are user wrappers: unknown.
_SDK_KEYS = {"anthropic": NAME_KEY, "openai_responses": NAME_KEY, "openai_chat": FUNCTION_NAME_KEY, "litellm": FUNCTION_NAME_KEY}
_SET_OPERATORS = (cst.BitOr, cst.BitAnd, cst.BitXor, cst.Subtract)
_PASS_THROUGH = frozenset({"list", "tuple", "sorted", "reversed"})
_DEPTH = 8


@dataclass(frozen=True)
class Held:
    """What a collection's elements are.

    ``kind``: ``names`` (strings), ``dicts`` (tool definitions), ``objects``
    (with a ``.name``), ``hashable`` (went through a set: not dicts, otherwise
    unknown) or ``unknown``. ``key`` is the ``key=`` of ``sorted`` for them
    (None for names, and for dicts whose shape is not known yet).
    """

    kind: str
    key: str | None = None

    @property
    def known(self) -> bool:
        return self.kind in ("names", "dicts", "objects")


NAMES = Held("names")
UNKNOWN = Held("unknown")
HASHABLE = Held("hashable")


@dataclass(frozen=True)
class SortFix:
    """Wrap ``node`` in ``sorted(...)`` with ``key`` (a lambda's source, or None for no key).

    ``read`` is the read of the reported collection this covers (:class:`~promptcache.lint.reads.Read`);
    ``node`` is ``read``, or the set that re-orders the collection's elements on their way to the slot.
    """

    node: cst.CSTNode
    key: str | None
    read: cst.CSTNode

    @property
    def through_a_set(self) -> bool:
        return self.node is not self.read


def sort_fix(flow: FlowAnalysis, node: cst.CSTNode, slots: Sequence[Slot]) -> list[SortFix] | None:
    """The ``sorted(...)`` wraps that order the unordered collection ``node`` in every slot of ``slots``
    it reaches: one per read (:func:`promptcache.lint.reads.reads`), at least one. None when a read's
    elements cannot be known (a wrong key would raise) or no read is found: wrapping only some reads
    would leave the order unfixed, so then the finding offers no edit."""
    fixes: dict[int, SortFix] = {}
    for slot in slots:
        found = reads(flow, node, slot.expr, slot.scope)
        if not found:
            return None
        for r in found:
            key = _key(flow, node, r.wrap, r.through_a_set, slot)
            if key is _NO_KEY:
                return None
            fixes.setdefault(id(r.wrap), SortFix(r.wrap, key, r.read))
    return list(fixes.values()) or None


_NO_KEY = object()


def _key(flow: FlowAnalysis, node: cst.CSTNode, wrap: cst.CSTNode, through_a_set: bool, slot: Slot):
    """The ``key=`` that sorts ``wrap`` (None for no key), or ``_NO_KEY`` when its elements are not known.
    ``node`` is the reported collection; when a set re-orders it, that set's own elements are judged."""
    judged = wrap if through_a_set else node
    held = Elements(flow).members(judged, flow.scope_at(judged))
    if held.known and (held.kind != "dicts" or held.key is not None):
        return held.key
    used = Elements(flow).consumed(wrap)
    if used.known:
        return used.key
    if held.kind != "hashable" and _is_the_tools(flow, wrap, slot):
        key = _SDK_KEYS.get(slot.sink.api) if slot.sink is not None else None
        if key is not None:
            return key
    return _NO_KEY


def _is_the_tools(flow: FlowAnalysis, use: cst.CSTNode, slot: Slot) -> bool:
    """True when the elements of ``use`` are the elements sent as ``tools=``: ``use`` is the slot's
    value, ``list(use)`` / ``tuple(use)`` is, or it is unpacked into it (``[*use]``)."""
    parent = flow.facts.parent.get
    if use is slot.expr:
        return True
    up = parent(use)
    if isinstance(up, cst.StarredElement) and isinstance(parent(up), (cst.List, cst.Tuple)):
        return parent(up) is slot.expr
    if isinstance(up, cst.Arg) and isinstance(call := parent(up), cst.Call) and isinstance(call.func, cst.Name):
        return call.func.value in ("list", "tuple") and call is slot.expr
    return False


class Elements:
    """Answers "what does this collection hold?" for one file (see the module docstring)."""

    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.index = flow.index

    # -- what a collection is built from ----------------------------------
    def members(self, e: cst.CSTNode, scope: Scope | None, depth: int = 0) -> Held:
        """What the elements of the collection ``e`` (evaluated in ``scope``) are."""
        if scope is None or depth > _DEPTH:
            return UNKNOWN
        d = depth + 1
        if isinstance(e, (cst.Set, cst.List, cst.Tuple)):
            found = [self.members(el.value, scope, d) if isinstance(el, cst.StarredElement) else self.element(el.value, scope, d) for el in e.elements]
            return _hashable(combine(found)) if isinstance(e, cst.Set) else combine(found)
        if isinstance(e, (cst.SetComp, cst.ListComp, cst.GeneratorExp)):
            found = self.element(e.elt, scope, d)
            return _hashable(found) if isinstance(e, cst.SetComp) else found
        if isinstance(e, cst.Dict):  # iterating a dict gives its keys
            return combine([self.element(el.key, scope, d) for el in e.elements if isinstance(el, cst.DictElement)])
        if isinstance(e, cst.DictComp):
            return self.element(e.key, scope, d)
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _SET_OPERATORS):
            return _hashable(combine([self.members(e.left, scope, d), self.members(e.right, scope, d)]))
        if isinstance(e, cst.Call):
            return self._call_members(e, scope, d)
        if isinstance(e, cst.Name):
            return self._name(e.value, scope, d, self.members, mutations="members")
        return UNKNOWN

    def _call_members(self, e: cst.Call, scope: Scope, depth: int) -> Held:
        func = e.func
        if isinstance(func, cst.Attribute) and func.attr.value == "keys" and not e.args:
            return _hashable(self._keys(func.value, scope, depth))
        qualified = self.index.qualified(func, scope)
        first = e.args[0].value if e.args and e.args[0].keyword is None and not e.args[0].star else None
        if qualified in ("set", "frozenset"):
            return _hashable(self.members(first, scope, depth) if first is not None else UNKNOWN)
        if qualified in _PASS_THROUGH and first is not None:
            return self.members(first, scope, depth)
        return UNKNOWN  # asyncio.as_completed gives futures; other calls are not followed

    def _keys(self, e: cst.BaseExpression, scope: Scope, depth: int) -> Held:
        """The keys of the mapping ``e`` (a dict literal or a name bound to one)."""
        if isinstance(e, cst.Name):
            return self._name(e.value, scope, depth, self._keys)
        if isinstance(e, cst.Dict):
            return self.members(e, scope, depth)
        return UNKNOWN

    # -- what one element is ------------------------------------------------
    def element(self, e: cst.CSTNode, scope: Scope, depth: int = 0) -> Held:
        """What the single value ``e`` is: a tool name, a tool definition or a tool object."""
        if depth > _DEPTH:
            return UNKNOWN
        d = depth + 1
        if isinstance(e, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return NAMES
        if isinstance(e, cst.Dict):
            return Held("dicts", _dict_key(e))
        if isinstance(e, cst.Name):
            return self._name(e.value, scope, d, self.element, loop=True)
        if isinstance(e, cst.Subscript) and isinstance(e.value, cst.Name):  # TOOL_SPECS[name]: a table's value
            return self._name(e.value.value, scope, d, self._values, mutations="values")
        if isinstance(e, cst.Call) and any(a.keyword is not None and a.keyword.value == "name" for a in e.args):
            if last_name(e.func)[:1].isupper():  # Tool(name=..., ...): an object with a .name
                return Held("objects", ATTRIBUTE_KEY)
        return UNKNOWN

    def _values(self, e: cst.BaseExpression, scope: Scope, depth: int) -> Held:
        """What the values of the mapping ``e`` are (a dict literal or comprehension)."""
        if isinstance(e, cst.Dict):
            return combine([self.element(el.value, scope, depth) for el in e.elements if isinstance(el, cst.DictElement)])
        if isinstance(e, cst.DictComp):
            return self.element(e.value, scope, depth)
        return UNKNOWN

    def _name(self, name: str, scope: Scope, depth: int, judge, loop: bool = False, mutations: str = "") -> Held:
        """Judge every binding of ``name``: assignments by their value (``judge``), a loop variable
        (when ``loop``) by what its iterable holds. ``mutations`` says what an in-place change adds:
        to a collection's ``members`` an element (``.add(x)``, ``.append(x)``) or a collection
        (``.update(xs)``, ``.extend(xs)``); to a mapping's ``values`` the value stored (``d[k] = v``)."""
        _, bindings = self.index.lookup(name, scope)
        found: list[Held] = []
        for b in bindings:
            if b.kind in ("assign", "walrus", "aug"):
                found.append(judge(b.value, b.scope, depth))
            elif b.kind == "for" and loop:
                found.append(self.members(b.value, b.scope, depth))
            elif b.kind == "mutate" and mutations == "members" and b.op != "setitem":
                found.append(self.members(b.value, b.scope, depth) if b.op == "extend" else self.element(b.value, b.scope, depth))
            elif b.kind == "mutate" and mutations == "values" and b.op == "setitem":
                found.append(self.element(b.value, b.scope, depth))
            elif b.kind != "mutate" or mutations:
                return UNKNOWN  # a parameter, an import, a with target, another change: not known here
        return combine(found)

    # -- how a collection is used -------------------------------------------
    def consumed(self, use: cst.CSTNode) -> Held:
        """What the elements of ``use`` are, judged by how the loop that iterates over it uses them."""
        parent = self.flow.facts.parent
        loop = parent.get(use)
        if isinstance(loop, cst.CompFor) and loop.iter is use:
            region = loop
            while isinstance(parent.get(region), cst.CompFor):
                region = parent[region]
            region = parent.get(region)
        elif isinstance(loop, cst.For) and loop.iter is use:
            region = loop.body
        else:
            return UNKNOWN
        if not isinstance(loop.target, cst.Name) or region is None:
            return UNKNOWN
        target = loop.target.value
        return combine([self._used_as(n) for n in descendants(region, cst.Name) if n.value == target and n is not loop.target])

    def _used_as(self, n: cst.Name) -> Held:
        parent = self.flow.facts.parent
        up = parent.get(n)
        if isinstance(up, cst.Index) and isinstance(sub := parent.get(parent.get(up)), cst.Subscript) and sub.value is not n:
            return NAMES  # SPECS[n]: a key of the tool table
        if isinstance(up, cst.DictElement) and up.value is n and key_text(up.key) == "name":
            return NAMES  # {"name": n, ...}
        if isinstance(up, cst.Attribute) and up.value is n and up.attr.value == "name":
            return Held("objects", ATTRIBUTE_KEY)
        if isinstance(up, cst.Subscript) and up.value is n:
            first = _subscript_key(up)
            if first == "name":
                return Held("dicts", NAME_KEY)
            outer = parent.get(up)
            if first == "function" and isinstance(outer, cst.Subscript) and _subscript_key(outer) == "name":
                return Held("dicts", FUNCTION_NAME_KEY)
        return UNKNOWN


def combine(found: list[Held]) -> Held:
    """One answer from several pieces of evidence: the known kind they agree on; ``unknown`` when
    they disagree; ``hashable`` when that is all they say."""
    known = {h for h in found if h.known}
    kinds = {h.kind for h in known}
    if len(kinds) == 1:
        keys = {h.key for h in known} - {None}
        if len(keys) <= 1:
            return Held(kinds.pop(), keys.pop() if keys else None)
        return UNKNOWN
    if kinds:
        return UNKNOWN
    return HASHABLE if HASHABLE in found else UNKNOWN


def _hashable(held: Held) -> Held:
    """Elements of a set: hashable, so never dicts. Evidence of dicts there is wrong (a set of dicts raises
    ``TypeError: unhashable type``), so it says no more than "hashable": no tool-dict key is guessed."""
    return held if held.known and held.kind != "dicts" else HASHABLE


def _dict_key(d: cst.Dict) -> str | None:
    """The name key of a tool definition literal: ``["function"]["name"]`` (OpenAI Chat) or ``["name"]``."""
    keys = {key_text(el.key): el.value for el in d.elements if isinstance(el, cst.DictElement)}
    function = keys.get("function")
    if isinstance(function, cst.Dict) and any(isinstance(el, cst.DictElement) and key_text(el.key) == "name" for el in function.elements):
        return FUNCTION_NAME_KEY
    return NAME_KEY if "name" in keys else None


def _subscript_key(sub: cst.Subscript) -> str | None:
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
        return key_text(sub.slice[0].slice.value)
    return None


__all__ = ["ATTRIBUTE_KEY", "FUNCTION_NAME_KEY", "NAME_KEY", "Held", "SortFix", "sort_fix"]
