"""OpenAI Responses endpoint: ``POST /v1/responses``, streaming and not, with ``previous_response_id`` chaining.

Shapes follow the ``openai`` 3.57 SDK's type definitions (``openai/types/responses/``):
the request ``response_create_params.py``; the reply ``response.py`` (``id``
``resp_...``, ``object: "response"``, ``status``, ``output``, ``usage``) with a
``message`` item (``response_output_message.py``) holding one ``output_text``
part (``response_output_text.py``) and ``usage`` of ``response_usage.py``:
``input_tokens``, ``input_tokens_details.cached_tokens`` (the engine's prefix
hit, tokens; ``cache_write_tokens`` 0: nothing is billed here),
``output_tokens``, ``output_tokens_details.reasoning_tokens`` (0), ``total_tokens``.

The body is read through its Chat view (:func:`local_backend.chat_template.responses_prompt`),
so it renders the tokens the same prompt gets through ``/v1/chat/completions``.
As the chat endpoint, the reply is text only: no tool call is parsed out of
the generated text (``function_call`` items are never produced).

``previous_response_id``: the server keeps the last :data:`~local_backend.server.state.RESPONSES_KEPT`
responses in memory (not those sent with ``store: false``); a chained request
is the earlier request's whole input, its output and the new input
(:class:`promptcache.trace.chain.ChainResolver`), so the cache sees one growing
prefix. An id it does not hold is OpenAI's 400: ``param``
``previous_response_id``, ``code`` ``previous_response_not_found``.

Status: a reply cut by the request's own ``max_output_tokens`` is
``incomplete`` (``incomplete_details.reason`` ``max_output_tokens``), as at
OpenAI; one cut by the server's default limit (``--default-max-tokens``, for a
request that sets none) is ``completed``: that limit stands in for a model
that would have stopped (the embedded model's text never ends by itself).

Streaming (``stream: true``): Server-Sent Events ``event: TYPE`` / ``data: {...}``
with a ``sequence_number`` from 0, in the order of ``response_stream_event.py``:
``response.created``, ``response.in_progress``, ``response.output_item.added``,
``response.content_part.added``, ``response.output_text.delta``...,
``response.output_text.done``, ``response.content_part.done``,
``response.output_item.done``, then ``response.completed`` (or
``response.incomplete``) with the whole response and its usage; a failure after
the status line is an ``error`` event followed by ``response.failed``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from local_backend.chat_template import check_chat_body, responses_prompt
from local_backend.server.errors import APIError, bad_request
from local_backend.server.generation import Generation, GenerationStream
from local_backend.server.params import flag, integer, read_json, sampling_params
from local_backend.server.state import RESPONSES_KEPT, ServerState, new_id
from promptcache.providers.apis import OPENAI_RESPONSES
from promptcache.trace.chain import UnknownPrefixError

router = APIRouter()

_UNSUPPORTED = {"background": "run the request in the foreground", "conversation": "chain with previous_response_id",
                "prompt": "send the prompt's text as instructions and input"}


def _checks(body: Mapping[str, Any]) -> None:
    """400s for what this server does not do (built-in tools, background runs, stored conversations), and for
    a request with nothing to answer (an empty input) or a tool_choice naming a function it does not send."""
    for key, advice in _UNSUPPORTED.items():
        if body.get(key) not in (None, False):
            raise bad_request(f"{key}: not supported by this server; {advice}", param=key)
    if body.get("top_logprobs"):
        raise bad_request("logprobs are not supported by this server; leave top_logprobs unset", param="top_logprobs")
    tools = body.get("tools")
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        if isinstance(tool, Mapping) and tool.get("type") not in (None, "function"):
            raise bad_request(f"tools[{k}]: built-in tool {tool.get('type')!r} is not served by this server; send "
                              "function tools only", param=f"tools[{k}]")
    salt = body.get("cache_salt")
    if salt is not None and not isinstance(salt, str):
        raise bad_request("cache_salt: expected a string", param="cache_salt")
    if body.get("input") in ("", []) and body.get("previous_response_id") is None:
        raise bad_request("input: the request has no input; send at least one input item or a non-empty string",
                          param="input")
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        names = {tool.get("name") for tool in tools if isinstance(tool, Mapping)} if isinstance(tools, list) else set()
        if choice.get("name") not in names:
            raise bad_request(f"tool_choice: no function named {choice.get('name')!r} in tools", param="tool_choice")


def _chained(state: ServerState, body: Mapping[str, Any]) -> dict[str, Any]:
    """The request with its chain resolved (the whole input); OpenAI's 400 for an id the server does not hold."""
    try:
        return state.responses.expanded(body)
    except UnknownPrefixError as exc:
        raise APIError(400, f"Previous response with id '{exc.response_id}' not found. This server keeps the last "
                            f"{RESPONSES_KEPT} responses in memory (not those sent with store: false).",
                       param="previous_response_id", code="previous_response_not_found") from exc


class _Reply:
    """The Response object of one generation, built up as its text arrives."""

    def __init__(self, gen: Generation, body: Mapping[str, Any], model: str) -> None:
        self.gen, self.body, self.model = gen, body, model
        self.created = int(time.time())
        self.item_id = new_id("msg_")
        self.text = ""

    @property
    def incomplete(self) -> bool:
        """Cut by the request's own ``max_output_tokens`` (see the module docstring)."""
        return self.gen.finish_reason == "length" and self.body.get("max_output_tokens") is not None

    def part(self) -> dict[str, Any]:
        return {"type": "output_text", "text": self.text, "annotations": [], "logprobs": []}

    def item(self, status: str) -> dict[str, Any]:
        return {"id": self.item_id, "type": "message", "status": status, "role": "assistant",
                "content": [self.part()] if status != "in_progress" else []}

    def usage(self) -> dict[str, Any]:
        gen = self.gen
        return {"input_tokens": gen.prompt_tokens,
                "input_tokens_details": {"cached_tokens": gen.cached_tokens, "cache_write_tokens": 0},
                "output_tokens": gen.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": gen.prompt_tokens + gen.output_tokens}

    def response(self, status: str, error: APIError | None = None) -> dict[str, Any]:
        body, done = self.body, status not in ("in_progress", "failed")
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), Mapping) else {}
        return {
            "id": self.gen.request_id, "object": "response", "created_at": self.created, "status": status,
            "error": {"code": "server_error", "message": error.message} if error is not None else None,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "model": self.model, "output": [self.item(status)] if done else [],
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
            "store": body.get("store", True), "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}}, "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [], "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"), "usage": self.usage() if done else None,
            "user": body.get("user"), "metadata": body.get("metadata") or {},
        }

    def final(self) -> dict[str, Any]:
        return self.response("incomplete" if self.incomplete else "completed")


def _keep(state: ServerState, reply: _Reply, chained: Mapping[str, Any]) -> None:
    """Remember a finished response for later ``previous_response_id`` requests (not with ``store: false``)."""
    state.responses.remember(reply.gen.request_id, chained, [reply.item("incomplete" if reply.incomplete else
                                                                       "completed")])


@router.post("/v1/responses")
async def create_response(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_json(request)
    model = state.check_model(body.get("model"))
    _checks(body)
    check_chat_body(OPENAI_RESPONSES, body)  # the request as sent: problems named at its own paths
    chained = _chained(state, body)
    prompt = responses_prompt(state.tokenizer, chained)
    max_tokens = state.max_tokens(integer(body, "max_output_tokens", minimum=1), len(prompt.token_ids),
                                  "max_output_tokens")
    gen = Generation(state, new_id("resp_"), prompt.token_ids, sampling_params(body, max_tokens),
                     cache_salt=body.get("cache_salt"), http_request=request)
    await gen.start()
    reply = _Reply(gen, body, model)
    if flag(body, "stream"):
        return GenerationStream(gen, _events(state, reply, chained))
    reply.text = await gen.text()
    _keep(state, reply, chained)
    return JSONResponse(reply.final(), headers=gen.headers)


async def _events(state: ServerState, reply: _Reply, chained: Mapping[str, Any]) -> AsyncIterator[str]:
    number = 0

    def event(kind: str, **payload: Any) -> str:
        nonlocal number
        data = {"type": kind, **payload, "sequence_number": number}
        number += 1
        return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

    where = {"item_id": reply.item_id, "output_index": 0, "content_index": 0}
    yield event("response.created", response=reply.response("in_progress"))
    yield event("response.in_progress", response=reply.response("in_progress"))
    yield event("response.output_item.added", output_index=0, item=reply.item("in_progress"))
    yield event("response.content_part.added", **where, part=reply.part())
    try:
        async for text in reply.gen.deltas():
            reply.text += text
            yield event("response.output_text.delta", **where, delta=text, logprobs=[])
    except APIError as exc:  # the status line is sent: report the failure in the stream
        yield event("error", code="server_error", message=exc.message, param=None)
        yield event("response.failed", response=reply.response("failed", exc))
        return
    if reply.gen.disconnected:
        return
    yield event("response.output_text.done", **where, text=reply.text, logprobs=[])
    yield event("response.content_part.done", **where, part=reply.part())
    final = reply.final()
    yield event("response.output_item.done", output_index=0, item=final["output"][0])
    _keep(state, reply, chained)
    yield event(f"response.{final['status']}", response=final)
