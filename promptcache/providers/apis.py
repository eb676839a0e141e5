"""The request APIs promptcache understands, and the key order their official SDKs send.

Key order is part of the cached bytes, so every body promptcache writes (the
converter, the renderers, the recorder) uses the order the SDKs put on the
wire, measured with ``anthropic`` 2.14 and ``openai`` 3.57 through
``httpx.MockTransport`` (``shared/traces/README.md``, "Record format"):

- Anthropic Messages: ``max_tokens, messages, model``, then the optional
  parameters alphabetically (their signature order).
- OpenAI Chat Completions: ``model, stream, service_tier, messages`` (the
  first two only when given), then the other optional parameters alphabetically.
- OpenAI Responses: ``model, stream, service_tier`` (when given), then the
  other parameters alphabetically, ``input`` and ``instructions`` among them
  (measured with ``openai`` 3.57.0, 2026-12-01). The rest of promptcache reads
  a Responses body through its Chat Completions view
  (:mod:`promptcache.convert.from_responses`).

The key lists include parameters older SDK versions sent (Anthropic
``temperature``/``top_k``/``top_p``, OpenAI ``functions``), so recorded traces
from them stay valid. Keys the SDK does not know (``extra_body``) come last,
in the order given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ANTHROPIC_MESSAGES = "anthropic.messages"
"""POST /v1/messages (Anthropic Messages API)."""
OPENAI_CHAT = "openai.chat"
"""POST /v1/chat/completions (OpenAI Chat Completions API and compatible servers)."""
OPENAI_RESPONSES = "openai.responses"
"""POST /v1/responses (OpenAI Responses API)."""
APIS = (ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES)
BEDROCK_CONVERSE = "bedrock.converse"
"""POST /model/{modelId}/converse (Amazon Bedrock Converse API); trace bodies carry ``modelId``. Read by
``simulate`` (under Bedrock's rules) and converted from (:func:`promptcache.convert.convert_body`, through its Claude
Messages equivalent); never a conversion target, and not among :data:`APIS` (the ``--api`` / ``--to`` choices)."""
TRACE_APIS = (*APIS, BEDROCK_CONVERSE)
"""Every ``api`` a trace record may name."""

ANTHROPIC_KEYS = (
    "max_tokens", "messages", "model",
    "cache_control", "container", "context_management", "diagnostics", "inference_geo", "mcp_servers",
    "metadata", "output_config", "service_tier", "speed", "stop_sequences", "stream", "system",
    "temperature", "thinking", "tool_choice", "tools", "top_k", "top_p", "user_profile_id", "workspace_id",
)
OPENAI_CHAT_KEYS = (  # openai 3.57 chat.completions.create: model, stream, service_tier, messages, then A-Z
    "model", "stream", "service_tier", "messages",
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "moderation", "n",
    "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "stop", "store", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
)
OPENAI_RESPONSES_KEYS = (  # openai 3.57 responses.create: model, stream, service_tier, then A-Z
    "model", "stream", "service_tier",
    "access_programs", "background", "background_options", "context_management", "conversation", "image",
    "include", "input", "instructions", "max_output_tokens", "max_tool_calls", "metadata", "moderation",
    "parallel_tool_calls", "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning", "safety_identifier", "store", "stream_options", "temperature", "text",
    "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user",
)
BEDROCK_CONVERSE_KEYS = (  # the Converse API reference's request order (modelId is the URI parameter)
    "modelId", "messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig",
    "additionalModelRequestFields", "promptVariables", "additionalModelResponseFieldPaths", "requestMetadata",
    "performanceConfig", "serviceTier",
)
SDK_KEYS = {ANTHROPIC_MESSAGES: ANTHROPIC_KEYS, OPENAI_CHAT: OPENAI_CHAT_KEYS, OPENAI_RESPONSES: OPENAI_RESPONSES_KEYS,
            BEDROCK_CONVERSE: BEDROCK_CONVERSE_KEYS}
API_PROVIDERS = {ANTHROPIC_MESSAGES: "anthropic", OPENAI_CHAT: "openai", OPENAI_RESPONSES: "openai",
                 BEDROCK_CONVERSE: "bedrock"}
"""The provider whose usage fields a response of each API carries."""


def api_provider(api: str) -> str:
    """The provider whose usage shape and cache rules an ``api`` belongs to (``openai.responses`` -> ``openai``).

    Raises:
        ValueError: unknown api (:func:`check_api`).
    """
    return API_PROVIDERS[check_api(api)]


def check_api(api: str) -> str:
    """Return ``api`` if promptcache knows it.

    Raises:
        ValueError: naming the known APIs.
    """
    if api not in SDK_KEYS:
        raise ValueError(f"unknown api {api!r}; expected one of {', '.join(TRACE_APIS)}")
    return api


def infer_api(body: Mapping[str, Any]) -> str:
    """Tell an Anthropic Messages, an OpenAI Chat and an OpenAI Responses body apart by their shape.

    Responses: ``input`` (or ``instructions`` / ``previous_response_id``) and no
    ``messages`` (``openai/types/responses/response_create_params.py``: the
    Responses API has no ``messages``). Otherwise OpenAI Chat: ``system``/
    ``developer``/``tool`` roles, ``tool_calls``, function tools, or a top-level
    key Anthropic does not have; Anthropic: a top-level ``system``,
    ``tool_use``/``tool_result`` blocks, ``input_schema`` tools, or a top-level
    key OpenAI Chat does not have.

    Raises:
        ValueError: the body fits both Anthropic and OpenAI Chat (e.g. only plain user messages and
            ``model``): pass the api explicitly.
    """
    if isinstance(body, Mapping) and "messages" not in body and \
            any(key in body for key in ("input", "instructions", "previous_response_id")):
        return OPENAI_RESPONSES
    messages = body.get("messages") if isinstance(body, Mapping) else None
    messages = messages if isinstance(messages, list) else []
    roles = {m.get("role") for m in messages if isinstance(m, Mapping)}
    blocks = {b.get("type") for m in messages if isinstance(m, Mapping) and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, Mapping)}
    tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)] if isinstance(body, Mapping) else []
    keys = set(body) if isinstance(body, Mapping) else set()
    openai = (roles & {"system", "developer", "tool"} or any(isinstance(m, Mapping) and m.get("tool_calls") for m in messages)
              or any("function" in t for t in tools) or keys - set(ANTHROPIC_KEYS))
    anthropic = ("system" in keys or blocks & {"tool_use", "tool_result", "image", "document"}
                 or any("input_schema" in t for t in tools) or keys - set(OPENAI_CHAT_KEYS))
    if bool(openai) != bool(anthropic):
        return OPENAI_CHAT if openai else ANTHROPIC_MESSAGES
    raise ValueError("cannot tell whether this body is anthropic.messages or openai.chat; pass api= explicitly")


def sdk_ordered(api: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` (shallow) with its keys in the order ``api``'s SDK sends them; unknown keys last."""
    known = SDK_KEYS[check_api(api)]
    ordered = {key: body[key] for key in known if key in body}
    ordered.update((key, value) for key, value in body.items() if key not in ordered)
    return ordered
