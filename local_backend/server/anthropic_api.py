"""Anthropic-compatible endpoints: ``POST /v1/messages`` (streaming and not) and ``/v1/messages/count_tokens``.

The body is converted to an OpenAI chat body (:func:`promptcache.convert.anthropic_to_openai`)
and rendered through the model's chat template, tools and tool calls included.
Usage is mapped from the engine's prefix hit by the request's ``cache_control``
markers (:func:`~local_backend.chat_template.anthropic_usage`); the raw hit
is in the ``x-promptcache-cached-tokens`` header. More than 4 breakpoints is a
400, as at the real API. Streaming follows the Messages streaming event
sequence: ``message_start``, ``content_block_start``, ``ping``,
``content_block_delta``..., ``content_block_stop``, ``message_delta``,
``message_stop`` (Anthropic docs, "Streaming Messages").
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from local_backend.server.errors import ANTHROPIC, APIError, bad_request
from local_backend.server.generation import Generation, GenerationStream
from local_backend.server.params import flag, integer, read_json, sampling_params, string_list
from local_backend.chat_template import ChatPrompt, anthropic_prompt, anthropic_usage
from local_backend.server.state import ServerState, new_id

router = APIRouter()

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}


def _prompt(state: ServerState, body: Mapping[str, Any]) -> ChatPrompt:
    """The body validated (:func:`~local_backend.chat_template.check_chat_body`) and rendered."""
    return anthropic_prompt(state.tokenizer, body)


@router.post("/v1/messages")
async def messages(request: Request) -> Response:
    state: ServerState = request.app.state.server
    body = await read_json(request)
    model = state.check_model(body.get("model"))
    max_tokens = integer(body, "max_tokens", minimum=1)
    if max_tokens is None:
        raise bad_request("max_tokens: Field required")
    prompt = _prompt(state, body)
    params = sampling_params(body, state.max_tokens(max_tokens, len(prompt.token_ids)), top_k_key="top_k")
    stream = flag(body, "stream")
    gen = Generation(state, new_id("msg_"), prompt.token_ids, params, stop=string_list(body, "stop_sequences"),
                     http_request=request)
    await gen.start()
    if stream:
        return GenerationStream(gen, _events(gen, model, prompt))
    text = await gen.text()
    return JSONResponse({
        "id": gen.request_id, "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": _stop_reason(gen), "stop_sequence": gen.stop_string,
        "usage": anthropic_usage(gen.prompt_tokens, gen.cached_tokens, prompt.breakpoints, gen.output_tokens),
    }, headers=gen.headers)


def _stop_reason(gen: Generation) -> str:
    return "stop_sequence" if gen.stop_string is not None else STOP_REASONS.get(gen.finish_reason or "", "end_turn")


def _event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload}, ensure_ascii=False)}\n\n"


async def _events(gen: Generation, model: str, prompt: ChatPrompt) -> AsyncIterator[str]:
    usage = anthropic_usage(gen.prompt_tokens, gen.cached_tokens, prompt.breakpoints, 1)
    yield _event("message_start", {"message": {
        "id": gen.request_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})
    yield _event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    yield _event("ping", {})
    try:
        async for text in gen.deltas():
            yield _event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}})
    except APIError as exc:  # the status line is sent: Anthropic's in-stream error event
        yield _event("error", {"error": exc.body(ANTHROPIC)["error"]})
        return
    yield _event("content_block_stop", {"index": 0})
    final = anthropic_usage(gen.prompt_tokens, gen.cached_tokens, prompt.breakpoints, gen.output_tokens)
    yield _event("message_delta", {"delta": {"stop_reason": _stop_reason(gen), "stop_sequence": gen.stop_string},
                                   "usage": final})
    yield _event("message_stop", {})


@router.post("/v1/messages/count_tokens")
async def count_tokens(request: Request) -> dict[str, int]:
    """Prompt tokens of a Messages body under this server's chat template (``{"input_tokens": N}``)."""
    state: ServerState = request.app.state.server
    body = await read_json(request)
    state.check_model(body.get("model"))
    return {"input_tokens": len(_prompt(state, body).token_ids)}
