"""Is a trace record's body a request body at all? The structural check the simulators run first.

A trace line can parse as a record and still hold no request: ``{"messages":
5}``, a message that is a number, a content block without a ``type``. Such a
body is *malformed input* (reported with its line number and skipped, or an
error under ``--strict``), never a request "the API would refuse" (that is a
well-formed request the provider answers with HTTP 400: a fifth breakpoint, a
``1h`` marker after a ``5m`` one; see the simulators' ``RequestRefused``).

:func:`check_body` checks only what rendering needs (types and the keys every
block must have); the README validator (:func:`promptcache.trace.records.validate_trace`)
checks everything else (key order, roles alternating, tool ids).

:func:`usable_records` / :func:`read_requests` apply it to a trace: the one
way ``simulate``, ``diff`` and ``verify`` keep the records they can use and
report the others (``FILE:LINE: malformed request body: ...; line skipped``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, check_api
from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceFormatError, TraceRecord, read_trace

__all__ = ["MalformedBody", "check_body", "read_requests", "usable_records"]

_ROLES = {ANTHROPIC_MESSAGES: ("user", "assistant"),
          "openai.chat": ("system", "developer", "user", "assistant", "tool", "function")}


class MalformedBody(ValueError):
    """A body that is not a request body of its API; the message names the path, e.g.
    ``body.messages: must be a non-empty list of messages, not int``."""


def _kind(value: Any) -> str:
    return type(value).__name__


def _need(ok: bool, path: str, problem: str) -> None:
    if not ok:
        raise MalformedBody(f"body.{path}: {problem}")


def _blocks(blocks: list[Any], path: str, *, text_only: bool = False) -> None:
    for j, block in enumerate(blocks):
        where = f"{path}[{j}]"
        _need(isinstance(block, Mapping), where, f"a content block must be an object, not {_kind(block)}")
        kind = block.get("type")
        _need(isinstance(kind, str), where, "a content block needs a string 'type'")
        if text_only:
            _need(kind == "text", where, f"must be a text block, not {kind!r}")
        if kind == "text":
            _need(isinstance(block.get("text"), str), f"{where}.text", "a text block needs a string 'text'")
        elif kind == "tool_use":
            _need(isinstance(block.get("id"), str) and isinstance(block.get("name"), str), where,
                  "a tool_use block needs a string 'id' and 'name'")
            _need(isinstance(block.get("input"), Mapping), f"{where}.input", "must be an object")
        elif kind == "tool_result":
            _need(isinstance(block.get("tool_use_id"), str), where, "a tool_result block needs a string 'tool_use_id'")
            content = block.get("content")
            _need(content is None or isinstance(content, str | list), f"{where}.content",
                  f"must be a string or a list of blocks, not {_kind(content)}")
            if isinstance(content, list):
                _blocks(content, f"{where}.content")


def _content(content: Any, path: str, api: str) -> None:
    if isinstance(content, list):
        _blocks(content, path)
    else:
        _need(isinstance(content, str) or (api != ANTHROPIC_MESSAGES and content is None), path,
              f"content must be a string or a list of blocks, not {_kind(content)}")


def check_body(api: str, body: Any, *, model_given: bool = False) -> None:
    """Check that ``body`` is structurally a request body of ``api``.

    Args:
        api: ``anthropic.messages`` or ``openai.chat``.
        body: the record's body.
        model_given: a model is supplied from elsewhere (``--model``), so the body needs none.

    Raises:
        MalformedBody: the first structural problem, naming its body path and what is expected.
        ValueError: an unknown api.
    """
    check_api(api)
    _need(isinstance(body, Mapping), "", f"a request body must be an object, not {_kind(body)}")
    messages = body.get("messages")
    _need(messages is not None, "messages", "missing: a request body needs a non-empty list of messages")
    _need(isinstance(messages, list) and bool(messages), "messages",
          f"must be a non-empty list of messages, not {_kind(messages) if not isinstance(messages, list) else 'empty'}")
    model = body.get("model")
    _need(isinstance(model, str) and bool(model) or (model is None and model_given), "model",
          "missing (pass --model)" if model is None else f"must be a model id string, not {model!r}")
    tools = body.get("tools")
    _need(tools is None or isinstance(tools, list), "tools", f"must be a list of tools, not {_kind(tools)}")
    for k, tool in enumerate(tools or ()):
        _need(isinstance(tool, Mapping), f"tools[{k}]", f"a tool must be an object, not {_kind(tool)}")
    if api == ANTHROPIC_MESSAGES and body.get("system") is not None:
        system = body["system"]
        _need(isinstance(system, str | list), "system", f"must be a string or a list of text blocks, not {_kind(system)}")
        if isinstance(system, list):
            _blocks(system, "system", text_only=True)
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        _need(isinstance(message, Mapping), where, f"a message must be an object, not {_kind(message)}")
        _need(message.get("role") in _ROLES[api], f"{where}.role",
              f"must be one of {', '.join(_ROLES[api])}, not {message.get('role')!r}")
        _content(message.get("content"), f"{where}.content", api)
        calls = message.get("tool_calls")
        if api != ANTHROPIC_MESSAGES and calls is not None:
            _need(isinstance(calls, list), f"{where}.tool_calls", f"must be a list, not {_kind(calls)}")
            for j, call in enumerate(calls):
                function = call.get("function") if isinstance(call, Mapping) else None
                _need(isinstance(function, Mapping) and isinstance(function.get("name"), str)
                      and isinstance(function.get("arguments"), str), f"{where}.tool_calls[{j}]",
                      "a tool call needs a 'function' object with string 'name' and 'arguments'")


def usable_records(records: Iterable[TraceRecord], *, strict: bool = False,
                   on_problem: Callable[[TraceFormatError], None] | None = None, source: str = "<trace>",
                   model_given: bool = False) -> Iterator[TraceRecord]:
    """The records whose body is a request body of their API (:func:`check_body`), in order.

    The one way ``simulate``, ``diff`` and ``verify`` pick the usable records of
    a trace: a record whose body is not a request body (no ``messages``, an
    OpenAI body labelled ``anthropic.messages``, ...) is reported as
    ``FILE:LINE: malformed request body: body.PATH: problem`` and skipped, as a
    malformed line is by :func:`~promptcache.trace.records.read_trace`. Lazy: a record
    is checked when it is reached.

    Args:
        records: trace records (``record.line`` names the line in reports).
        strict: raise the problem instead of skipping the record.
        on_problem: where skipped records are reported; a
            :class:`~promptcache.trace.records.SkippedLines` shared with ``read_trace``
            counts lines and records together (default: a ``TraceFormatWarning`` each).
        source: the trace's file name in reports.
        model_given: a model comes from elsewhere (``--model``, ``verify``'s backend), so a body needs none.

    Raises:
        TraceFormatError: with ``strict``, the first malformed body.
    """
    skip = SkippedLines.of(on_problem)
    for record in records:
        try:
            check_body(record.api, record.body, model_given=model_given)
        except ValueError as exc:  # MalformedBody, or an api that is not one of APIS
            problem = TraceFormatError(f"malformed request body: {exc}", source=source, line=record.line)
            if strict:
                raise problem from None
            skip(problem)
            continue
        yield record


def read_requests(path: str | os.PathLike[str], *, strict: bool = False,
                  on_problem: Callable[[TraceFormatError], None] | None = None,
                  model_given: bool = False) -> list[TraceRecord]:
    """A trace file's usable records: :func:`~promptcache.trace.records.read_trace`, then :func:`usable_records`.

    Raises:
        TraceFormatError: with ``strict``, the first malformed line or body.
        EmptyTraceError: no usable record (an empty file, or every line or body skipped), naming ``path``
            and the lines skipped.
        OSError: the file cannot be read.
    """
    skip = SkippedLines.of(on_problem)
    skipped_before = skip.count
    records = read_trace(path, strict=strict, on_problem=skip)
    usable = list(usable_records(records, strict=strict, on_problem=skip,
                                 source=os.path.basename(os.fspath(path)), model_given=model_given))
    if not usable:
        raise EmptyTraceError(os.fspath(path), skip.count - skipped_before)
    return usable
