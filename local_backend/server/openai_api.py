"""OpenAI-compatible endpoints: ``/v1/chat/completions``, ``/v1/completions``, ``/v1/models``, ``/tokenize``.

Shapes follow the OpenAI API reference (and vLLM's server where OpenAI has no
counterpart): ``usage.prompt_tokens_details.cached_tokens`` is the engine's
prefix hit in tokens; streaming is Server-Sent Events of ``chat.completion.chunk``
/ ``text_completion`` objects ending with ``data: [DONE]``, with a final
usage chunk when ``stream_options.include_usage`` is set. ``/tokenize`` is
vLLM's (``{"prompt"}`` or ``{"messages", "tools"}`` -> ``{"count",
"max_model_len", "tokens"}``); ``promptcache verify`` uses it for an exact
oracle. vLLM's ``cache_salt`` request field isolates a tenant's cache.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from local_backend.server.errors import OPENAI, APIError, bad_request
from local_backend.server.generation import Generation, GenerationStream
from local_backend.server.params import flag, integer, read_json, sampling_params, string_list
from local_backend.chat_template import check_chat_body, openai_chat_prompt, render_messages
from local_backend.server.state import ServerState, new_id
from promptcache.providers.apis import OPENAI_CHAT

router = APIRouter()


def _state(request: Request) -> ServerState:
    return request.app.state.server


def _max_tokens(state: ServerState, body: Mapping[str, Any], prompt_tokens: int) -> int:
    """``max_completion_tokens`` (or the legacy ``max_tokens``) checked against the context; the server's
    default, capped to the room left, when neither is given."""
    param = "max_completion_tokens"
    value = integer(body, param, minimum=1)
    if value is None:
        param = "max_tokens"
        value = integer(body, param, minimum=1)
    return state.max_tokens(value, prompt_tokens, param)


def _common_checks(body: Mapping[str, Any]) -> None:
    if integer(body, "n", 1, minimum=1) != 1:
        raise bad_request("n: only n=1 is supported; send several requests instead", param="n")
    if body.get("logprobs") or body.get("top_logprobs"):
        raise bad_request("logprobs are not supported by this server; leave logprobs unset", param="logprobs")
    salt = body.get("cache_salt")
    if salt is not None and not isinstance(salt, str):
        raise bad_request("cache_salt: expected a string", param="cache_salt")


def _include_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, Mapping) and bool(options.get("include_usage"))


def _usage(gen: Generation) -> dict[str, Any]:
    return {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.output_tokens,
            "total_tokens": gen.prompt_tokens + gen.output_tokens,
            "prompt_tokens_details": {"cached_tokens": gen.cached_tokens}}


def _sse(payload: Any) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    state = _state(request)
    body = await read_json(request)
    model = state.check_model(body.get("model"))
    _common_checks(body)
    prompt = openai_chat_prompt(state.tokenizer, body)
    params = sampling_params(body, _max_tokens(state, body, len(prompt.token_ids)))
    stop, stream = string_list(body, "stop"), flag(body, "stream")
    include_usage = stream and _include_usage(body)
    gen = Generation(state, new_id("chatcmpl-"), prompt.token_ids, params, stop=stop,
                     cache_salt=body.get("cache_salt"), http_request=request)
    await gen.start()
    created = int(time.time())
    if stream:
        return GenerationStream(gen, _chat_chunks(gen, model, created, include_usage))
    text = await gen.text()
    return JSONResponse({
        "id": gen.request_id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                     "logprobs": None, "finish_reason": gen.finish_reason}],
        "usage": _usage(gen), "system_fingerprint": None,
    }, headers=gen.headers)


async def _chat_chunks(gen: Generation, model: str, created: int, include_usage: bool) -> AsyncIterator[str]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": gen.request_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    yield _sse(chunk({"role": "assistant", "content": ""}))
    try:
        async for text in gen.deltas():
            yield _sse(chunk({"content": text}))
    except APIError as exc:  # the status line is sent: report the failure in the stream (as vLLM does)
        yield _sse(exc.body(OPENAI))
        yield "data: [DONE]\n\n"
        return
    yield _sse(chunk({}, gen.finish_reason))
    if include_usage:
        yield _sse({"id": gen.request_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [], "usage": _usage(gen)})
    yield "data: [DONE]\n\n"


def _completion_prompt(state: ServerState, prompt: Any) -> list[int]:
    """``prompt`` of ``/v1/completions``: a string, token ids, or a one-element list of either."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]
    if isinstance(prompt, str):
        if not prompt:
            raise bad_request("prompt: the prompt is empty; send at least one token", param="prompt")
        return state.tokenizer.encode(prompt)
    if isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        if not prompt:
            raise bad_request("prompt: the prompt is empty; send at least one token", param="prompt")
        return list(prompt)
    if prompt is None:
        raise bad_request("prompt: field required (a string or a list of token ids)", param="prompt")
    raise bad_request("prompt: one prompt per request (a string or a list of token ids); send batches as "
                      "separate requests", param="prompt")


@router.post("/v1/completions")
async def completions(request: Request) -> Response:
    state = _state(request)
    body = await read_json(request)
    model = state.check_model(body.get("model"))
    _common_checks(body)
    for unsupported in ("echo", "suffix", "best_of"):
        if body.get(unsupported) not in (None, False, 1):
            raise bad_request(f"{unsupported}: not supported by this server; leave it unset", param=unsupported)
    token_ids = _completion_prompt(state, body.get("prompt"))
    params = sampling_params(body, _max_tokens(state, body, len(token_ids)))
    stop, stream = string_list(body, "stop"), flag(body, "stream")
    include_usage = stream and _include_usage(body)
    gen = Generation(state, new_id("cmpl-"), token_ids, params, stop=stop, cache_salt=body.get("cache_salt"),
                     http_request=request)
    await gen.start()
    created = int(time.time())

    def choice(text: str, finish_reason: str | None) -> dict[str, Any]:
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}

    def obj(choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": gen.request_id, "object": "text_completion", "created": created, "model": model,
                "choices": choices}

    if stream:
        async def chunks() -> AsyncIterator[str]:
            try:
                async for text in gen.deltas():
                    yield _sse(obj([choice(text, None)]))
            except APIError as exc:  # the status line is sent: report the failure in the stream
                yield _sse(exc.body(OPENAI))
                yield "data: [DONE]\n\n"
                return
            yield _sse(obj([choice("", gen.finish_reason)]))
            if include_usage:
                yield _sse({**obj([]), "usage": _usage(gen)})
            yield "data: [DONE]\n\n"

        return GenerationStream(gen, chunks())
    text = await gen.text()
    return JSONResponse({**obj([choice(text, gen.finish_reason)]), "usage": _usage(gen),
                         "system_fingerprint": None}, headers=gen.headers)


@router.get("/v1/models")
async def models(request: Request) -> dict[str, Any]:
    state = _state(request)
    return {"object": "list", "data": [
        {"id": name, "object": "model", "created": state.created, "owned_by": "promptcache",
         "root": state.engine.model_name, "max_model_len": state.engine.max_model_len}
        for name in state.model_names]}


@router.post("/tokenize")
async def tokenize(request: Request) -> dict[str, Any]:
    """vLLM's ``/tokenize``: the prompt's token ids, exactly as the generation endpoints would build them."""
    state = _state(request)
    body = await read_json(request)
    if body.get("model") is not None:
        state.check_model(body["model"])
    if "messages" in body:
        check_chat_body(OPENAI_CHAT, body)
        messages = body["messages"]
        add_generation_prompt = body.get("add_generation_prompt", True)
        if not isinstance(add_generation_prompt, bool):
            raise bad_request("add_generation_prompt: expected true or false", param="add_generation_prompt")
        tokens = render_messages(state.tokenizer, messages, body.get("tools"), add_generation_prompt)
    else:
        tokens = _completion_prompt(state, body.get("prompt"))
    return {"count": len(tokens), "max_model_len": state.engine.max_model_len, "tokens": tokens}
