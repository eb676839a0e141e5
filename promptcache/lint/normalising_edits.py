"""Stores that normalise a message field in place: the same bytes each time they run (PC204 does not report them).

A conversion run over the whole conversation before every send (graphiti's ``for m in messages: m.content =
self._clean_input(m.content)``, sweep's ``sanitize_anthropic_messages``) changed each message before it was first
sent, and running it again changes nothing: the next request repeats the bytes the last one sent. All of these
must hold (issue 11, from false positives in graphiti and sweep; the boundaries from the review):

- the store is in a ``for`` loop over the whole list (``h``, ``self.messages``, ``enumerate(h)``, ``list(h)``):
  not a slice or a filter (``h[:-4]``, ``older = h[:-4]``, ``if i < len(h) - 4:`` on the index: the window moves,
  so a message goes out raw, then changed);
- the function adds no message to that list after the store that goes out before the store runs again
  (``h.append(q)``, ``h += [...]``, ``insert``, ``extend``, ``self.add(...)`` for ``self.messages``; before the
  first send, or in a loop that sends): it goes out as written and is normalised next turn; a reply appended
  after the last send is normalised before it first goes out;
- the value is idempotent on the field: ``x.strip()`` (``rstrip`` / ``lstrip`` / ``lower`` / ``upper`` /
  ``casefold``, literal arguments only); ``clean(x)`` with the field as its one argument, by a function named to
  clean, normalise or strip and not to summarise (``clean_up_with_llm_summary(x)`` rewrites); or a
  literal under ``if x == <another literal>:`` (``if m["role"] == "system": m["role"] = "user"``: false once done),
  also as one operand of an ``and`` whose others are per-object settings (TaskWeaver's ``if not
  self.config.support_system_role and m["role"] == "system":``, ``self.config`` bound in ``__init__`` only); then a
  dict literal added in the loop whose field holds another literal (``{"role": "assistant", ...}``) is never
  changed by the store, so adding it does not count; or a value of another type than the one tested under ``if
  isinstance(x, list):`` (khoj's ``m.content = "\\n".join(...)``; blind set 10), or of the type ``if not
  isinstance(x, T):`` tests (``[{"type": "text", ...}]`` under ``not isinstance(x, list)``): false once done.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import IDEMPOTENT_METHODS, is_literal, last_name
from promptcache.lint.walk import TreeFacts, descendants

Code = Callable[[cst.CSTNode], str]  # a node's source text
SetUp = Callable[[str], bool]  # ``self.<attr>`` is bound in ``__init__`` only

_ADDS = frozenset({"append", "extend", "insert"})
_SEND_KEYWORDS = frozenset({"messages", "input", "contents"})
_INVOKE = frozenset({"invoke", "ainvoke", "stream", "astream"})
_NOT_SENDS = frozenset({"count_tokens", "get_num_tokens_from_messages"})
# Names a guard or a bookkeeping call may use without picking messages by position or run-time values.
_GUARD_BUILTINS = frozenset({"isinstance", "str", "dict", "list", "len", "print", "None", "True", "False", "repr",
                             "bool", "int", "type", "hasattr", "getattr"})
_WHOLE = frozenset({"enumerate", "list", "reversed", "tuple"})  # a loop over these still visits every message
_CLEANER = re.compile(r"(?i)clean|normali[sz]e|strip")  # not `sanitize_xml`: escaping `&` again is no no-op


def normalising_store(target: cst.BaseExpression, value: cst.BaseExpression | None, node: cst.CSTNode,
                      code: Code, facts: TreeFacts, set_up: SetUp = lambda _: False) -> bool:
    """``target = value`` (the statement ``node``) normalises a field of every message of a list in place, and its
    function adds no message to that list afterwards (see the module). ``facts``: the walk's parents and order;
    ``set_up(attr)``: ``self.attr`` is bound in ``__init__`` only (a per-object setting a guard may read)."""
    base = target.value if isinstance(target, (cst.Attribute, cst.Subscript)) else None
    field = code(target)
    tested = _tested_other(node, field, value, code, facts) if is_literal(value) else None
    converted = value is not None and _converted(node, field, value, code, facts) and _made_of(value, target, node, facts)
    listed, func = _whole_list_loop(base, node, code, facts, set_up if tested or converted else None) \
        if base is not None else (None, None)
    if value is None or listed is None or func is None:
        return False
    untouched = _untouched(target, tested, code)
    if _added_after(listed, node, func, code, facts, untouched):
        return False
    if converted:
        return True
    if isinstance(value, cst.Call):
        callee = value.func
        if isinstance(callee, cst.Attribute) and callee.attr.value in IDEMPOTENT_METHODS:
            return code(callee.value) == field and all(is_literal(a.value) for a in value.args)
        name = last_name(callee)
        return bool(_CLEANER.search(name)) and not S.summarise_callee(name) and len(value.args) == 1 \
            and code(value.args[0].value) == field
    return tested is not None


def _untouched(target: cst.BaseExpression, tested: str | None, code: Code) -> Callable[[cst.CSTNode], bool]:
    """For a store under ``if m["key"] == <tested>:``: whether an add (``h.insert(i, {...})``) puts a dict literal
    whose ``"key"`` holds another literal, a message the store never changes."""
    key = target.slice[0].slice if isinstance(target, cst.Subscript) and len(target.slice) == 1 else None
    if tested is None or not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)):
        return lambda _: False
    name = code(key.value)

    def untouched(add: cst.CSTNode) -> bool:
        added = add.args[-1].value if isinstance(add, cst.Call) and add.args else None
        held = next((el.value for el in added.elements if isinstance(el, cst.DictElement)
                     and code(el.key) == name), None) if isinstance(added, cst.Dict) else None
        return held is not None and is_literal(held) and code(held) != tested
    return untouched


def _whole_list_loop(base: cst.BaseExpression, node: cst.CSTNode, code: Code, facts: TreeFacts,
                     set_up: SetUp | None = None):
    """``(code of the list, function)`` when ``node`` is in a ``for`` loop, inside a function, that binds ``base``
    to each message of a whole list, else ``(None, None)``. ``set_up``: guards may read per-object settings."""
    func = next((a for a in facts.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
    loop = next((a for a in facts.ancestors(node) if isinstance(a, cst.For) and code(base) in _bound_names(a.target, code)
                 and facts.within(a, func)), None) if func is not None else None
    listed = _whole(loop.iter, code) if loop is not None else None
    if listed is None or not _fixed_guards(loop, node, code(base), func, code, facts, set_up) or _skips(loop) \
            or _bound_to_part(listed, func, code) or _gated(loop, func, listed, code, facts):
        return None, None
    return listed, func


def _fixed_guards(loop: cst.For, node: cst.CSTNode, item: str, func: cst.FunctionDef, code: Code, facts: TreeFacts,
                  set_up: SetUp | None = None) -> bool:
    """Every ``if`` between the loop and ``node`` tests the message itself against constants (``if m["role"] ==
    "system"``, ``isinstance(m["content"], str)``), or the output list being built: the same messages each turn.
    Not the loop index (``if i < len(h) - 4``) or a value read at run time (``m["turn"] < turn_no - 3``): a window
    that moves. With ``set_up``, also ``self.x...`` where ``set_up("x")`` (a setting fixed per object)."""
    outputs = {code(t.target) for stmt in descendants(func, cst.Assign) if isinstance(stmt.value, cst.List)
               and not stmt.value.elements for t in stmt.targets}  # `out = []`, filled in the loop
    allowed = {item, *outputs, *_GUARD_BUILTINS}
    owner = func.params.params[0].name.value if set_up is not None and func.params.params else None

    def fixed(n: cst.Name) -> bool:
        if n.value in allowed:
            return True
        read = facts.parent.get(n)
        return n.value == owner and isinstance(read, cst.Attribute) and read.value is n and set_up(read.attr.value)
    for at in facts.ancestors(node):
        if at is loop:
            return True
        if isinstance(at, cst.If) and not all(fixed(n) for n in descendants(at.test, cst.Name)
                                              if not _attribute_part(n, facts)):
            return False
    return True


def _attribute_part(n: cst.Name, facts: TreeFacts) -> bool:
    """``n`` is the ``attr`` of ``x.attr`` (not a name read on its own)."""
    read = facts.parent.get(n)
    return isinstance(read, cst.Attribute) and read.attr is n


def _skips(loop: cst.For) -> bool:
    """The loop body can skip messages (``continue`` / ``break``): which ones are changed may move each turn."""
    return next(descendants(loop.body, (cst.Continue, cst.Break)), None) is not None


def _gated(loop: cst.For, func: cst.FunctionDef, listed: str, code: Code, facts: TreeFacts) -> bool:
    """An ``if`` / ``while`` around the loop, in ``func``, tests the list (``if len(history) > MAX:``): the messages
    go out unchanged until the list grows past it, then change."""
    for at in facts.ancestors(loop):
        if at is func:
            return False
        test = at.test if isinstance(at, (cst.If, cst.While)) else None
        if test is not None and listed in {code(n) for n in descendants(test, (cst.Name, cst.Attribute))}:
            return True
    return False


def _bound_to_part(listed: str, func: cst.FunctionDef, code: Code) -> bool:
    """``listed`` is a local name assigned a moving slice or a comprehension in ``func`` (``older = h[:-4]``): not
    the whole conversation. ``h = h[1:]`` (the head moved to ``system=``), ``out = []`` and a copy of every
    message (``[dict(m) for m in h]``) are."""
    for stmt in descendants(func, cst.Assign):
        if any(code(t.target) == listed for t in stmt.targets) and (_moving_slice(stmt.value) or _filtered(stmt.value)):
            return True
    return False


def _filtered(e: cst.BaseExpression) -> bool:
    """A comprehension that keeps some messages (an ``if`` clause, or over a moving slice); ``[dict(m) for m in h]``
    copies them all."""
    if not isinstance(e, (cst.ListComp, cst.GeneratorExp)):
        return False
    comp = e.for_in
    return bool(comp.ifs) or _moving_slice(comp.iter) or comp.inner_for_in is not None


def _moving_slice(e: cst.BaseExpression) -> bool:
    """``h[:-4]``, ``h[-8:]``, ``h[:len(h) - 2]``: a slice whose bound counts from the end, so the messages it holds
    change as the list grows (not ``h[1:]``)."""
    return isinstance(e, cst.Subscript) and any(
        bound is not None and not isinstance(bound, cst.Integer)  # `-4`, `len(h) - 2`, `n`: not a count from the start
        for el in e.slice if isinstance(el.slice, cst.Slice) for bound in (el.slice.lower, el.slice.upper))


def _bound_names(target: cst.BaseExpression, code: Code) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {code(el.value) for el in target.elements}
    return {code(target)}


def _whole(iterable: cst.BaseExpression, code: Code) -> str | None:
    """The list a loop visits whole: ``h``, ``self.h``, ``enumerate(h)``, ``list(h)``, ``h[1:]`` (a head split
    off); None for anything else (``h[:-4]``: :func:`_moving_slice`)."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in _WHOLE \
            and len(iterable.args) == 1:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Subscript) and not _moving_slice(iterable) and all(
            isinstance(el.slice, cst.Slice) for el in iterable.slice):
        iterable = iterable.value
    return code(iterable) if isinstance(iterable, (cst.Name, cst.Attribute)) else None


def _added_after(listed: str, node: cst.CSTNode, func: cst.FunctionDef, code: Code, facts: TreeFacts,
                 untouched: Callable[[cst.CSTNode], bool]) -> bool:
    """``func`` may add a message to the list ``listed`` after ``node`` that goes out before the store runs again:
    ``append`` / ``extend`` / ``insert`` / ``+=`` on it, or any call of a method of its owner (``self.add(...)``
    for ``self.messages``), before the first send after ``node`` or in a loop that also sends (an agent's tool
    loop: the tool result goes out raw on the next pass). A reply appended after the last send is normalised
    before it first goes out. An add ``untouched`` says the store never changes does not count."""
    order = facts.order
    after = order.get(node, 0)
    sends = [c for c in descendants(func, cst.Call) if order.get(c, 0) > after and _sends(c, listed, code)]
    first = min((order.get(c, 0) for c in sends), default=None)
    send_ids = {id(c) for c in sends}
    owner = listed.rsplit(".", 1)[0] + "." if "." in listed else None
    for n in descendants(func, (cst.Call, cst.AugAssign)):
        at = order.get(n, 0)
        if at <= after or not _adds(n, listed, owner, code, facts, node) or untouched(n):
            continue
        if first is None or at < first or _in_sending_loop(n, node, send_ids, facts):
            return True
    return False


def _adds(n: cst.CSTNode, listed: str, owner: str | None, code: Code, facts: TreeFacts, store: cst.CSTNode) -> bool:
    """``n`` may add to ``listed``: ``append`` / ``extend`` / ``insert`` / ``+=`` on it, a call given it (not a
    send, not a builtin such as ``len``), or a method of its owner (``self.add(...)`` for ``self.messages``) whose
    body in the class adds to it or is not found. Not a call inside the store itself (its cleaner)."""
    if isinstance(n, cst.AugAssign):
        return code(n.target) == listed
    if facts.within(n, store):
        return False
    func = n.func
    if isinstance(func, cst.Attribute) and func.attr.value in _ADDS and code(func.value) == listed:
        return True
    if not (isinstance(func, cst.Name) and func.value in _GUARD_BUILTINS) and not _sends(n, listed, code) \
            and any(code(a.value) == listed for a in n.args):
        return True  # `add_message(history, "user", q)`
    if owner is None or not isinstance(func, cst.Attribute) or code(func.value) + "." != owner:
        return False
    method = _method(n, func.attr.value, facts)
    return method is None or any(_adds(x, listed, None, code, facts, store) for x in descendants(method, (cst.Call, cst.AugAssign)))


def _method(n: cst.CSTNode, name: str, facts: TreeFacts) -> cst.FunctionDef | None:
    """The method ``name`` of the class whose method holds ``n``, defined in its body (None: inherited or unseen)."""
    cls = next((a for a in facts.ancestors(n) if isinstance(a, cst.ClassDef)), None)
    if cls is None:
        return None
    return next((d for d in cls.body.body if isinstance(d, cst.FunctionDef) and d.name.value == name), None)


def _in_sending_loop(n: cst.CSTNode, store: cst.CSTNode, send_ids: set[int], facts: TreeFacts) -> bool:
    """A ``for`` / ``while`` loop holding ``n`` in its function also holds a send but not the store: what ``n``
    adds goes out on the next pass before it is normalised (with the store in the loop, it is normalised first)."""
    for at in facts.ancestors(n):
        if isinstance(at, cst.FunctionDef):
            return False
        if isinstance(at, (cst.For, cst.While)) and any(id(c) in send_ids for c in descendants(at, cst.Call)):
            return not facts.within(store, at)
    return False


def _sends(call: cst.Call, listed: str, code: Code) -> bool:
    """``call`` sends the list: ``messages=`` / ``input=`` / ``contents=`` of a request, or LangChain's
    ``model.invoke(h)`` (not ``print(h)`` or ``len(h)``)."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    if method in _NOT_SENDS:
        return False  # `client.messages.count_tokens(messages=h)` sends nothing to the model
    return any(code(a.value) == listed and (a.keyword is not None and a.keyword.value in _SEND_KEYWORDS
                                            or a.keyword is None and method in _INVOKE) for a in call.args)


def _tested_other(node: cst.CSTNode, field: str, value: cst.BaseExpression, code: Code, facts: TreeFacts) -> str | None:
    """The literal ``<lit>`` when ``node`` runs under ``if <field> == <lit>:`` (or ``if ... and <field> == <lit>``)
    with a literal other than ``value``, in its function: once written, the test is false. Else None."""
    for test in _guarding_tests(node, facts):
        if isinstance(test, cst.Comparison) and code(test.left) == field and len(test.comparisons) == 1:
            cmp = test.comparisons[0]
            if isinstance(cmp.operator, cst.Equal) and is_literal(cmp.comparator) and code(cmp.comparator) != code(value):
                return code(cmp.comparator)
    return None


def _converted(node: cst.CSTNode, field: str, value: cst.BaseExpression, code: Code, facts: TreeFacts) -> bool:
    """``node`` runs under ``if isinstance(<field>, T):`` and ``value`` is of a type not in ``T`` (khoj's
    ``if isinstance(m.content, list): m.content = "\\n".join(...)``), or under ``if not isinstance(<field>, T):`` and
    ``value`` is of a type in ``T``: once written, the test is false, so running it again changes nothing."""
    made = _kind(value)
    if made is None:
        return False
    for test in _guarding_tests(node, facts):
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        kinds = _isinstance_of(test.expression if negated else test, field, code)
        if kinds is not None and (made in kinds) == negated:
            return True
    return False


# Calls whose value differs on each call, by their last name (``datetime.now()``, ``time.time()``, ``uuid4()``).
_CLOCKS = re.compile(r"^(now|utcnow|today|time|time_ns|monotonic|perf_counter|uuid\d|getpid|random|randint|choice|choices|"
                     r"token_hex|token_urlsafe|urandom)$")


def _made_of(value: cst.BaseExpression, target: cst.BaseExpression, node: cst.CSTNode, facts: TreeFacts) -> bool:
    """``value`` is made of the field alone: it reads no parameter of its function but those ``target`` names
    (``m`` of ``m["content"] = ...``) and calls no clock or random source (:data:`_CLOCKS`). A history reloaded each
    request is converted again; a clock or a user's data in the conversion would differ each time
    (``[TextBlock(text=m["content"])]``, ``json.dumps(m["content"])`` are made of the field)."""
    func = next((a for a in facts.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
    params = {p.name.value for p in descendants(func.params, cst.Param)} if func is not None else set()
    params -= {n.value for n in descendants(target, cst.Name)}
    if any(n.value in params for n in descendants(value, cst.Name)):
        return False
    return not any(_CLOCKS.match(last_name(c.func) or "") for c in descendants(value, cst.Call))


def _guarding_tests(node: cst.CSTNode, facts: TreeFacts):
    """The tests that hold whenever ``node`` runs, in its function: each ``and`` operand of every ``if`` whose body
    (not ``else``) holds it."""
    for at in facts.ancestors(node):
        if isinstance(at, cst.FunctionDef):
            return
        if isinstance(at, cst.If) and facts.within(node, at.body):
            yield from _conjuncts(at.test)


_KINDS = frozenset({"str", "list", "dict", "tuple"})


def _isinstance_of(test: cst.BaseExpression, field: str, code: Code) -> frozenset[str] | None:
    """The builtin types ``T`` of ``isinstance(<field>, T)`` (a name or a tuple of names among str / list / dict /
    tuple); None for any other test."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and code(test.args[0].value) == field):
        return None
    t = test.args[1].value
    names = [el.value for el in t.elements] if isinstance(t, cst.Tuple) else [t]
    kinds = frozenset(n.value for n in names if isinstance(n, cst.Name))
    return kinds if len(kinds) == len(names) and kinds <= _KINDS else None


def _kind(e: cst.BaseExpression) -> str | None:
    """The builtin type ``e`` evaluates to, when its syntax says (``"\\n".join(...)``, ``str(x)``, an f-string, a
    list display or comprehension, a dict display); else None."""
    if isinstance(e, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "str"
    if isinstance(e, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(e, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(e, cst.Tuple):
        return "tuple"
    if isinstance(e, cst.Call):
        if isinstance(e.func, cst.Name) and e.func.value in _KINDS:
            return e.func.value
        if isinstance(e.func, cst.Attribute) and e.func.attr.value == "join" \
                and isinstance(e.func.value, (cst.SimpleString, cst.ConcatenatedString)):
            return "str"
    return None


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of an ``and`` chain (``a and (b and c)``: a, b, c); ``[test]`` for anything else."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


__all__ = ["normalising_store"]
