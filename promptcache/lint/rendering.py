"""Where a value goes next: rendered whole into text, or only one of its fields read (issue 11 review).

Two precision judgements of the taint engine rest on the data flow here, not on names:

- an id or timestamp keyword of a class call (``RunContext(run_id=...)``, ``Part(timestamp=...)``) is the
  object's metadata only while nothing renders the whole object: :func:`rendered_whole` is True when the
  object (the call itself, or the one local name it is bound to) is the receiver of a method call
  (``SystemPrompt(...).render()``), is serialised (``asdict(ctx)``, ``vars``, ``str``, ``json.dumps``),
  unpacked (``**ctx``) or interpolated (``f"{ctx}"``); then the keyword may be in the text, and is kept;
- a parameter's prompt field (``data.instructions``) is a prompt passed through only when it flows back into
  the same field (:func:`same_field`: ``ModelInputData(instructions=data.model_data.instructions + "...")``,
  openai-agents-python's input filters); read into another slot (``system=BASE + profile.instructions``) it
  is per-user text. So is a message's ``content`` written into the ``content`` of the message it is converted
  to (``{"role": "system", "content": _serialize(message.content)}``).

``parents`` is the walk's parent map (:class:`promptcache.lint.walk.TreeFacts`); without it (no tree
facts) both answer the reporting side (rendered, not the same field).
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.walk import descendants

_SERIALISERS = frozenset({"dataclasses.asdict", "dataclasses.astuple", "asdict", "astuple", "vars", "str", "repr",
                          "json.dumps", "pprint.pformat"})
_PASS_THROUGH = (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp, cst.ConcatenatedString)


def rendered_whole(call: cst.Call, parents: dict | None, qualified, names: dict | None = None) -> bool:
    """True when the object ``call`` builds is rendered as a whole (see the module docstring).

    ``qualified(func_expr) -> str | None`` resolves a callee's dotted name (the module index's); ``names``, a
    dict the caller keeps for one tree, holds the names of each function body already read (a body is read
    once, not once per call in it)."""
    if parents is None:
        return True
    parent = parents.get(call)
    if _renders(call, parents, qualified):
        return True
    if isinstance(parent, cst.AssignTarget) or not isinstance(parent, cst.Assign):
        return False
    targets = parent.targets
    if len(targets) != 1 or not isinstance(targets[0].target, cst.Name):
        return False
    name = targets[0].target.value
    body = _enclosing_body(parent, parents)
    uses = [n for n in _names_in(body, names).get(name, ()) if n is not targets[0].target]
    return any(_renders(n, parents, qualified) for n in uses)


def _names_in(body: cst.CSTNode, names: dict | None) -> dict[str, list[cst.Name]]:
    """The :class:`cst.Name` nodes of ``body`` (not inside lambdas) by identifier, from ``names`` when read before."""
    found = names.get(id(body)) if names is not None else None
    if found is not None and found[0] is body:
        return found[1]
    by_value: dict[str, list[cst.Name]] = {}
    for n in descendants(body, cst.Name):
        by_value.setdefault(n.value, []).append(n)
    if names is not None:
        names[id(body)] = (body, by_value)
    return by_value


def _renders(node: cst.CSTNode, parents: dict, qualified) -> bool:
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return isinstance(parents.get(parent), cst.Call) and parents[parent].func is parent  # `sp.render()`
    if isinstance(parent, cst.FormattedStringExpression):
        return True
    if isinstance(parent, cst.Arg):
        if parent.star == "**":
            return True
        call = parents.get(parent)
        return isinstance(call, cst.Call) and (qualified(call.func) or "") in _SERIALISERS
    return False


def _enclosing_body(node: cst.CSTNode, parents: dict) -> cst.CSTNode:
    current = parents.get(node)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
        current = parents.get(current)
    return current if current is not None else node


def same_field(attr_node: cst.Attribute, field: str, parents: dict | None) -> bool:
    """True when ``attr_node`` (``data.instructions``) reaches, through ``+``, ``or``, conditionals and calls that
    take it as their only positional argument (a converter: ``_serialize(message.content)``), a keyword argument
    or a dict key of the same name (``instructions=``, ``{"content": ...}``): the prompt or the message content it
    was given, passed through (openai-agents-python's input filters; browser-use's message serialisers). A dict
    key only takes the value whole or converted, without ``+`` (text joined to a message's content is new text)."""
    if parents is None:
        return False
    current: cst.CSTNode = attr_node
    parent = parents.get(current)
    built = False  # text joined to the value on the way (`"Rules: " + m.content`)
    while isinstance(parent, _PASS_THROUGH) or _sole_argument(parent, parents):
        built |= isinstance(parent, (cst.BinaryOperation, cst.ConcatenatedString))
        if isinstance(parent, cst.Arg):
            parent = parents.get(parent)  # the converter call
        current, parent = parent, parents.get(parent)
    if isinstance(parent, cst.DictElement) and parent.value is current:
        # A message's content converted into the message it becomes is the whole value, nothing joined to it:
        # `"Write like: " + message.content` in a system message is the request's text in the prefix (issue 11 review).
        return not built and isinstance(parent.key, cst.SimpleString) and parent.key.value[1:-1] == field
    return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == field


def _sole_argument(node: cst.CSTNode | None, parents: dict) -> bool:
    """``node`` is the only positional argument of a call (``f(x)``, ``Cls.f(x, flag=True)``)."""
    if not isinstance(node, cst.Arg) or node.keyword is not None or node.star:
        return False
    call = parents.get(node)
    return isinstance(call, cst.Call) and sum(1 for a in call.args if a.keyword is None) == 1


def managed(call: cst.Call, parents: dict | None) -> bool:
    """True when ``call`` is the context manager of a ``with`` item (``with agent.session(run_id=...) as s``)."""
    return parents is not None and isinstance(parents.get(call), cst.WithItem)


__all__ = ["managed", "rendered_whole", "same_field"]
