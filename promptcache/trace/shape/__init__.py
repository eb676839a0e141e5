"""Is a body a request body of its API? The one body-shape validator, at three levels.

Each level includes the one before (:class:`Level`):

- ``STRUCTURE``: what rendering needs: types and the keys every block must
  have (``messages``, or a Responses body's ``input``). A body failing it is *malformed input*: ``simulate``, ``diff`` and
  ``verify`` report its line and skip it (:func:`check_body`). It is never a
  request "the API would refuse" (a well-formed request the provider answers
  with a 400, which the simulators report as refused).
- ``API``: what the provider's API refuses with a 400: roles, block types and
  the turns they belong to, tool definitions (valid unique names, object
  schemas; Anthropic server tools carry none), ``cache_control`` markers
  (``{"type": "ephemeral"}``, optional ``ttl`` ``5m`` / ``1h``; at most 4, the
  top-level one included; no ``1h`` after a ``5m``), and tool-call pairing
  (every call answered right after it, every result answering one; one
  implementation for both APIs, :func:`~promptcache.trace.shape.walk.pairing`).
  ``promptcache serve`` and the engine's chat template refuse such a body,
  worded as the provider words it (:meth:`TraceIssue.provider_message`).
  Anthropic turns of one role in a row are combined, as the API does.
- ``TRACE``: the traces README's validator list on top: only known keys, in
  the SDK's order; ``model`` and ``max_tokens``; non-empty texts; roles
  alternating (Anthropic: first and last ``user``; OpenAI: the last ``user``
  or ``tool``); tool ids well formed and unique; tool-call arguments that
  parse as a JSON object valid against the tool's schema (with ``jsonschema``).

Sources: Anthropic docs, "Messages" and "Prompt caching" ("up to 4 cache
breakpoints", "Mixing different TTLs"); OpenAI API reference, "Chat
Completions"; for ``openai.responses`` bodies the ``openai`` 3.57 SDK's type
definitions (:mod:`promptcache.trace.shape.responses`, which lists its levels). Model names, id formats and request counts of the sample traces
are not imposed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, BEDROCK_CONVERSE, OPENAI_RESPONSES, check_api
from promptcache.trace.shape.anthropic import Markers, walk_anthropic
from promptcache.trace.shape.bedrock import walk_bedrock
from promptcache.trace.shape.openai import walk_openai
from promptcache.trace.shape.responses import responses_tools, walk_responses
from promptcache.trace.shape.walk import (Level, Stop, TraceIssue, Walk, anthropic_tools, cache_control_issue, json_kind,
                                          openai_tools)

__all__ = ["Level", "MalformedBody", "TraceIssue", "body_issues", "cache_control_issue", "check_body", "json_kind",
           "tool_issues", "validate_body"]


class MalformedBody(ValueError):
    """A body that is not a request body of its API; the message names the path, e.g.
    ``body.messages: must be a non-empty list of messages, not an integer``."""


def body_issues(api: str, body: Any, level: Level = Level.TRACE, *, model_given: bool = False,
                first: bool = False) -> list[TraceIssue]:
    """The issues of ``body`` as a request body of ``api`` at ``level``, in render order.

    Args:
        model_given: a model comes from elsewhere (``--model``; the server checks its own), so none is needed.
        first: stop at the first issue.

    Returns:
        The issues, each with ``path`` set (``body.messages[0].content``); empty when valid.
        Never raises for bad input; an unknown ``api`` is itself an issue.
    """
    try:
        check_api(api)
    except ValueError:
        return [TraceIssue(f"unknown api {api!r}", path="api")]
    if not isinstance(body, Mapping):
        return [TraceIssue(f"a request body must be an object, not {json_kind(body)}", path="body")]
    w = Walk(api, level, first)
    try:
        if api == OPENAI_RESPONSES:
            walk_responses(w, body, model_given)
        elif api == BEDROCK_CONVERSE:
            walk_bedrock(w, body, model_given)
        else:
            messages = w.head(body, model_given)
            (walk_anthropic if api == ANTHROPIC_MESSAGES else walk_openai)(w, body, messages)
    except Stop:
        pass
    return w.issues


def validate_body(api: str, body: Any) -> list[TraceIssue]:
    """Every issue of one request body at the ``TRACE`` level (the traces README's validator list)."""
    return body_issues(api, body, Level.TRACE)


def check_body(api: str, body: Any, *, model_given: bool = False) -> None:
    """Check that ``body`` is structurally a request body of ``api`` (the ``STRUCTURE`` level).

    Raises:
        MalformedBody: the first problem, naming its body path and what is expected.
        ValueError: an unknown api.
    """
    check_api(api)
    issues = body_issues(api, body, Level.STRUCTURE, model_given=model_given, first=True)
    if issues:
        raise MalformedBody(str(issues[0]))


def tool_issues(api: str, tools: Any, path: str = "tools") -> list[TraceIssue]:
    """A request's tool definitions, checked as the provider's API does (extra keys allowed).

    Returns:
        The issues, each with its ``path`` (``tools[0]``); empty when valid.
    """
    try:
        check_api(api)
    except ValueError:
        return [TraceIssue(f"unknown api {api!r}", path="api")]
    w = Walk(api, Level.API)
    if api == ANTHROPIC_MESSAGES:
        anthropic_tools(w, tools, path, Markers(w))
    elif api == OPENAI_RESPONSES:
        responses_tools(w, tools, path)
    else:
        openai_tools(w, tools, path)
    return w.issues
