"""promptcache's own SDK in linted code: which expressions are a ``PromptBuilder`` or a ``Conversation``.

The linter reads apps built with the SDK the way it reads direct
``anthropic`` / ``openai`` calls:

- the layers of a :class:`promptcache.PromptBuilder` (``.system``, ``.tools``,
  ``.document``, ``.example``) are prefix slots (:mod:`promptcache.lint.slots`);
- ``PromptBuilder.history(conversation)`` is a conversation sink
  (:mod:`promptcache.lint.sinks`): what it receives is sent as the history, so
  the history rules (PC2xx) judge it like ``messages=`` / ``input=``;
- ``Conversation(messages)`` holds the messages it is given: a list passed to it
  is the history it wraps (:mod:`promptcache.lint.turns`).

Names are resolved through imports (``from promptcache import PromptBuilder``,
``import promptcache as pc``, ``from promptcache.prompt import PromptBuilder``, and the older module
paths ``promptcache.builder`` / ``promptcache.conversation``, which still import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.index import ModuleIndex, Scope

BUILDER_CLASSES = frozenset({"promptcache.PromptBuilder", "promptcache.prompt.PromptBuilder",
                             "promptcache.prompt.builder.PromptBuilder", "promptcache.builder.PromptBuilder"})
CONVERSATION_CLASSES = frozenset({"promptcache.Conversation", "promptcache.prompt.Conversation",
                                  "promptcache.prompt.conversation.Conversation",
                                  "promptcache.conversation.Conversation"})
BUILDER_LAYERS = frozenset({"system", "tools", "document", "example"})
# Every PromptBuilder method that returns a builder (followed when resolving a method chain).
BUILDER_METHODS = BUILDER_LAYERS | {"cache_ttl", "history", "user", "tool_result", "turn"}


def builder_root(index: ModuleIndex, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> cst.CSTNode | None:
    """The ``PromptBuilder(...)`` call (or the annotated parameter) that ``expr`` is built from, if any.

    Follows builder method chains (``PromptBuilder().system(...).history(...)``),
    names and ``self`` attributes bound to a builder, and parameters annotated
    ``PromptBuilder``; at most 8 steps deep.
    """
    if depth > 8:
        return None
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in BUILDER_METHODS:
            return builder_root(index, expr.func.value, scope, depth + 1)
        return expr if index.qualified(expr.func, scope) in BUILDER_CLASSES else None
    bindings = []
    if isinstance(expr, cst.Name):
        bindings = index.lookup(expr.value, scope)[1]
    elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        cls = index.class_of_receiver(expr.value, scope)
        bindings = cls.attrs.get(expr.attr.value, []) if cls is not None else []
    for b in bindings:
        if b.kind in ("assign", "walrus", "aug") and b.value is not None:
            found = builder_root(index, b.value, b.scope, depth + 1)
            if found is not None:
                return found
        if b.kind == "param" and isinstance(b.node, cst.Param) and b.node.annotation is not None:
            if index.qualified(b.node.annotation.annotation, b.scope) in BUILDER_CLASSES:
                return b.node
    return None


def history_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The conversation passed to ``PromptBuilder.history(conversation)`` (positional or keyword), or None."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "conversation":
            return arg.value
    return None


def conversation_messages(index: ModuleIndex, call: cst.Call, scope: Scope) -> cst.BaseExpression | None:
    """The initial messages of a ``Conversation(messages, ...)`` call, or None (not a Conversation, or none given)."""
    if index.qualified(call.func, scope) not in CONVERSATION_CLASSES:
        return None
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "messages":
            return arg.value
    return None
