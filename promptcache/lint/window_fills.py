"""PC203 sites where a sliding window of the history is copied into the list that is sent, rather than bound to
the history itself: ``messages += history[-10:]``, ``messages.extend(history[-10:])``, and
``for human, ai in history[-5:]: messages.append(...)`` (kotaemon's ``AnswerWithContextPipeline``, blind set 32).
Once the history is longer than the window, each turn the window starts one exchange later, so the message after
the system prompt changes on every request.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import trim_guard
from promptcache.lint.builder_returns import role_of
from promptcache.lint.expressions import last_name
from promptcache.lint.index import Binding
from promptcache.lint.sinks import CONVERSATION_NAME
from promptcache.lint.walk import descendants

_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*$")  # a module constant by its name

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.turns import Turns


def window_fills(turns: Turns, sliding) -> list[tuple[cst.CSTNode, str]]:
    """``(subscript, its code)`` for each window ``h[-N:]`` / ``h[start:]`` (``sliding`` says which subscripts
    are) of a conversation copied into a list the function builds anew and sends, by ``+=``, ``.extend(...)`` or a
    ``for`` loop that adds messages, on the per-turn path and not made rare by a size guard
    (:mod:`promptcache.lint.trim_guard`). A conversation: a list sent as one elsewhere or named for one
    (``history``, ``chat_history``, ``messages``), or, for a loop, one whose body adds an assistant message. Not
    the last few retrieved documents, tool results or uploads, nor a window added to a list that persists
    (``self.history += results[-5:]``: that history only grows)."""
    out = []
    for _, bindings in turns.history_bindings():
        fresh = {id(b.scope) for b in bindings if b.kind == "assign" and b.scope.kind == "function" and _new_list(b.value)}
        for b in bindings:
            if id(b.scope) not in fresh:
                continue
            for sub, at in _windows(turns, b, sliding):
                if turns.per_turn(at) and not trim_guard.rare(turns, at, trim_guard.of_slice(sub), b.scope):
                    out.append((sub, turns.flow.code(sub)))
    return list({id(node): (node, code) for node, code in out}.values())


def _windows(turns: Turns, b: Binding, sliding) -> list[tuple[cst.Subscript, cst.CSTNode]]:
    """The windows of a conversation that binding ``b`` copies into its list, each with the statement to judge
    the trim at."""
    if (b.kind == "aug" and b.op == "AddAssign") or (b.kind == "mutate" and b.op == "extend"):
        found = [(sub, b.node) for sub in _top_windows(b.value, sliding)
                 if _conversation(turns, sub.value, b.scope)]
        if found:
            return found
    if b.kind in ("mutate", "aug") and b.op in ("append", "extend", "AddAssign"):
        loop = next((a for a in turns.facts.ancestors(b.node) if isinstance(a, (cst.For, cst.FunctionDef))), None)
        if isinstance(loop, cst.For):  # `for human, ai in history[-5:]:`, `for m in history[-10:]:`
            return [(sub, loop) for sub in _top_windows(loop.iter, sliding) if not fixed_list(turns.index, sub.value, b.scope)
                    and (_adds_assistant(loop.body) or _conversation(turns, sub.value, b.scope))]
    return []


def _top_windows(value: cst.CSTNode | None, sliding) -> list[cst.Subscript]:
    """The sliding subscripts of ``value`` that are its elements: itself, the argument of ``list(...)``,
    ``enumerate(...)``, ``reversed(...)``, or what a comprehension iterates (not a slice inside a message's text)."""
    while True:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _PASS_THROUGH \
                and value.args:
            value = value.args[0].value
        elif isinstance(value, (cst.ListComp, cst.GeneratorExp)) and value.for_in.inner_for_in is None:
            value = value.for_in.iter
        else:
            break
    return [value] if isinstance(value, cst.Subscript) and sliding(value) else []


_PASS_THROUGH = frozenset({"list", "enumerate", "reversed", "tuple", "iter"})
_ASSISTANT_CLASSES = frozenset({"AIMessage", "AssistantMessage", "AIMessageChunk"})


def _new_list(value: cst.CSTNode | None) -> bool:
    """A list made anew: a literal, a comprehension, ``list(...)``."""
    return isinstance(value, (cst.List, cst.ListComp)) or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list")


def _conversation(turns: Turns, listed: cst.BaseExpression, scope) -> bool:
    """``listed`` is a conversation: a list some sink sends as one, or a parameter or attribute named for one.
    Not a fixed list of examples (:func:`fixed_list`)."""
    if fixed_list(turns.index, listed, scope):
        return False
    if turns.list_refs(listed, scope) & turns.history_refs:
        return True
    name = listed.value if isinstance(listed, cst.Name) else listed.attr.value if isinstance(listed, cst.Attribute) else ""
    return bool(CONVERSATION_NAME.search(name))


def fixed_list(index, listed: cst.BaseExpression, scope) -> bool:
    """``listed`` holds the same list on every call, so a window of it drops nothing: a name or a class attribute
    (``self.SHOTS``) bound only to list or tuple literals without ``*`` (``EXAMPLES = [...]``, also a local one,
    never appended to), or an imported constant by its name (``from .fewshot import EXAMPLES``; not one named for
    a conversation, ``HISTORY``)."""
    bindings = index.bindings_of(listed, scope)
    if not bindings:
        return False
    if all(b.kind == "import" for b in bindings):
        name = listed.value if isinstance(listed, cst.Name) else ""
        return bool(_CONSTANT.match(name)) and not CONVERSATION_NAME.search(name)
    return all(b.kind == "assign" and isinstance(b.value, (cst.List, cst.Tuple))
               and not any(isinstance(e, cst.StarredElement) for e in b.value.elements) for b in bindings)


def _adds_assistant(body: cst.CSTNode) -> bool:
    """The loop body adds an assistant message (a role dict, an SDK param call, ``AIMessage(...)``): it copies
    exchanges of a conversation, not documents, tool results or images."""
    return any(role_of(node) in ("assistant", "ai", "model") or (
        isinstance(node, cst.Call) and last_name(node.func) in _ASSISTANT_CLASSES)
        for node in descendants(body, (cst.Dict, cst.Call)))


__all__ = ["window_fills"]
