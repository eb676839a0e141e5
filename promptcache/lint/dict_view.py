"""A block or message as the code writes it: a dict literal, or a call of an SDK request ``TypedDict``.

``TextBlockParam(type="text", text=t, cache_control={"type": "ephemeral"})`` builds the same dict as
``{"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}`` (a ``TypedDict`` called with keywords
returns a plain ``dict``), so every reader of blocks and messages (system messages, cache breakpoints, the
blocks of a request) reads both through :func:`entries`: the keywords, after the keys of one positional dict
literal (``BetaCacheControlEphemeralParam({"type": "ephemeral"})``). A call with another positional argument
(``TextBlockParam(other)``) or a ``**mapping`` is not read (a dict the code does not show).

The known types are those of the official SDKs' request params, matched by the last name of the callee
(``TextBlockParam``, ``anthropic.types.TextBlockParam``, ``types.beta.BetaTextBlockParam``):

- anthropic ``anthropic.types`` / ``anthropic.types.beta``: content blocks ``*BlockParam``, messages
  ``MessageParam`` (a ``TypedDict`` up to anthropic 0.x; a union of ``UserMessageParam`` /
  ``AssistantMessageParam`` / ``SystemMessageParam`` in anthropic 2.15), ``CacheControlEphemeralParam``, tools
  ``ToolParam`` and the dated server tools (``WebSearchTool20250305Param``), each also with the ``Beta`` prefix;
- openai ``openai.types.chat``: ``ChatCompletion*MessageParam``, ``ChatCompletionContentPart*Param``;
  ``openai.types.responses``: ``EasyInputMessageParam``, ``ResponseInput*Param``, ``ResponseOutput*Param``.

Source: the ``TypedDict`` classes of the installed SDKs (anthropic 2.15.0, openai 3.57.0; read 2026-12-02).
"""

from __future__ import annotations

import re

import libcst as cst

_PARAM_TYPE = re.compile(
    r"^(?:(?:Beta)?(?:\w*BlockParam|(?:User|Assistant|System)?MessageParam|CacheControlEphemeralParam|ToolParam"
    r"|[A-Z]\w*\d{8}Param)"
    r"|ChatCompletion\w*MessageParam|ChatCompletionContentPart\w*Param"
    r"|EasyInputMessageParam|ResponseInput\w*Param|ResponseOutput\w*Param)$"
)


def param_type(call: cst.BaseExpression) -> str | None:
    """The SDK param ``TypedDict`` name ``call`` constructs, or None (not a call of one)."""
    if not isinstance(call, cst.Call):
        return None
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name if name is not None and _PARAM_TYPE.match(name) else None


def string_key(node: cst.BaseExpression | None) -> str | None:
    """The text of a plain string literal used as a key (``"role"``, ``'''role'''``, ``r"role"``), else None
    (not bytes, an f-string or a name). The one reader of a string key for the lint engine."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None]


def is_block(node: cst.CSTNode | None) -> bool:
    """A dict literal, or a call of a known SDK param ``TypedDict`` with keywords, or with one dict literal
    (``BetaCacheControlEphemeralParam({"type": "ephemeral"})``) before them."""
    if isinstance(node, cst.Dict):
        return True
    if param_type(node) is None:
        return False
    positional = _positional(node)
    return not positional or len(positional) == 1 and not positional[0].star and isinstance(positional[0].value, cst.Dict)


def entries(node: cst.CSTNode | None) -> list[tuple[str, cst.BaseExpression]] | None:
    """``[(key, value)]`` for the string-literal keys of a dict literal or the keywords of a known SDK param
    ``TypedDict`` call, in source order; None when ``node`` is neither (see :func:`is_block`)."""
    if isinstance(node, cst.Dict):
        return [(key, el.value) for el in node.elements
                if isinstance(el, cst.DictElement) and (key := string_key(el.key)) is not None]
    if is_block(node):
        positional = _positional(node)  # `TypedDict(mapping, **kwargs)` is `dict(mapping, **kwargs)`
        first = entries(positional[0].value) if positional else []
        return first + [(a.keyword.value, a.value) for a in node.args if a.keyword is not None]
    return None


def entry(node: cst.CSTNode | None, key: str) -> cst.BaseExpression | None:
    """The value of ``key`` in the dict literal or SDK param call ``node``, or None."""
    for k, value in entries(node) or ():
        if k == key:
            return value
    return None


__all__ = ["entries", "entry", "is_block", "param_type", "string_key"]
