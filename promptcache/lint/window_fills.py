"""PC203 sites where a sliding window of the history is copied into the list that is sent, rather than bound to
the history itself: ``messages += history[-10:]``, ``messages.extend(history[-10:])``, and
``for human, ai in history[-5:]: messages.append(...)`` (kotaemon's ``AnswerWithContextPipeline``, blind set 32).
Once the history is longer than the window, each turn the window starts one exchange later, so the message after
the system prompt changes on every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import trim_guard
from promptcache.lint.index import Binding

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.turns import Turns


def window_fills(turns: Turns, sliding) -> list[tuple[cst.CSTNode, str]]:
    """``(subscript, its code)`` for each window ``h[-N:]`` / ``h[start:]`` (``sliding`` says which subscripts
    are) copied into a sent list by ``+=``, ``.extend(...)`` or a ``for`` loop that appends, on the per-turn path
    and not made rare by a size guard (:mod:`promptcache.lint.trim_guard`)."""
    out = []
    for bindings in _sent_lists(turns):
        for b in bindings:
            for sub, at in _windows(turns, b, sliding):
                if turns.per_turn(at) and not trim_guard.rare(turns, at, trim_guard.of_slice(sub), b.scope):
                    out.append((sub, turns.flow.code(sub)))
    return out


def _sent_lists(turns: Turns):
    """The bindings of each name or ``self.`` attribute that a sink sends as its conversation."""
    refs = turns.history_refs
    for scope in turns.index.scopes:
        yield from (bindings for name, bindings in scope.bindings.items() if ("n", id(scope), name) in refs)
    for cls in turns.index.classes:
        yield from (bindings for attr, bindings in cls.attrs.items() if ("a", id(cls), attr) in refs)


def _windows(turns: Turns, b: Binding, sliding) -> list[tuple[cst.Subscript, cst.CSTNode]]:
    """The windows binding ``b`` copies into its list, each with the statement to judge the trim at."""
    if (b.kind == "aug" and b.op == "AddAssign") or (b.kind == "mutate" and b.op == "extend"):
        return [(sub, b.node) for sub in _top_windows(b.value, sliding)]
    if b.kind == "mutate" and b.op == "append" and _message(b.value):
        loop = next((a for a in turns.facts.ancestors(b.node) if isinstance(a, (cst.For, cst.FunctionDef))), None)
        if isinstance(loop, cst.For):  # `for human, ai in history[-5:]:` (or `enumerate(history[-5:])`)
            return [(sub, loop) for sub in _top_windows(loop.iter, sliding)]
    return []


def _top_windows(value: cst.CSTNode | None, sliding) -> list[cst.Subscript]:
    """The sliding subscripts of ``value`` that are its elements: itself, or the argument of ``list(...)``,
    ``enumerate(...)``, ``reversed(...)`` (not a slice deep inside a message's text)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _PASS_THROUGH \
            and value.args:
        value = value.args[0].value
    return [value] if isinstance(value, cst.Subscript) and sliding(value) else []


_PASS_THROUGH = frozenset({"list", "enumerate", "reversed", "tuple", "iter"})


def _message(value: cst.CSTNode | None) -> bool:
    """An appended message: a dict literal, a call (``HumanMessage(content=human)``), a name bound in the loop."""
    return isinstance(value, (cst.Dict, cst.Call, cst.Name, cst.Tuple))


__all__ = ["window_fills"]
