"""Where ``promptcache verify`` replays a trace: the in-process engine, or any OpenAI-compatible server.

A backend turns one trace request into the prompt token ids the oracle
should see and the figures the backend reports:

* :class:`LocalBackend`: a :class:`~local_backend.engine.LocalEngine` in
  this process. Bodies are rendered by :mod:`local_backend.chat_template`,
  the same code ``promptcache serve`` uses, so the local replay and an HTTP
  replay against ``serve`` see identical tokens. The oracle is exact.
* :class:`HTTPBackend`: an OpenAI-compatible URL (``promptcache serve``,
  vLLM started with ``--enable-prompt-tokens-details``, SGLang with
  ``--enable-cache-report``). Anthropic bodies are converted with
  :func:`promptcache.convert.anthropic_to_openai` and OpenAI Responses bodies
  read through their Chat view (:func:`promptcache.convert.responses_to_chat`),
  so they replay on any Chat Completions server; each request is streamed
  (TTFT = time to the first chunk) and ``usage.prompt_tokens_details.cached_tokens``
  is read from the final usage chunk. The oracle's tokens come from the
  server's ``/tokenize`` (vLLM's endpoint; ``serve`` has it too) when it
  answers, else from the local ChatML tokenizer, flagged approximate.
  Tool definitions go with the trace's own ``tool_choice`` (``"auto"`` when it
  has none): SGLang renders tools into the prompt only when ``tool_choice`` is
  not ``"none"``. A server that refuses ``"auto"`` (vLLM without
  ``--enable-auto-tool-choice``) gets ``"none"`` instead, which vLLM still
  renders, and a note says so. ``max_tokens`` stays small, so no real tool
  call is parsed or matters.

A server that cannot be reached, or refuses the API key, raises
:class:`BackendError` (the message says what to do); a request the server
refuses raises for that request only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_RESPONSES
from promptcache.convert import anthropic_to_openai, responses_to_chat

OPENAI_INSTALL = "pip install 'promptcache[openai]'"
AUTO_TOOL_CHOICE_REFUSED = ("tool choice", "tool_choice", "tool-call-parser", "enable-auto-tool-choice")
"""Words of a 400 refusing ``tool_choice: "auto"`` (vLLM: '"auto" tool choice requires --enable-auto-tool-choice
and --tool-call-parser to be set')."""


class BackendError(RuntimeError):
    """The backend cannot be used at all: unreachable, or it refuses the API key. The message says what to do."""


@dataclass(frozen=True)
class Replay:
    """What a backend reported for one request.

    Attributes:
        prompt_tokens: prompt length the backend reports (tokens).
        cached_tokens: prefix-cache hit the backend reports (tokens).
        ttft_s: seconds from sending to the first token (None if unknown).
        output_token_ids: generated ids when the backend exposes them (local), else None.
    """

    prompt_tokens: int
    cached_tokens: int
    ttft_s: float | None
    output_token_ids: list[int] | None = None


def openai_body(api: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as an OpenAI chat body (Anthropic bodies converted, cache markers dropped; Responses bodies
    through their Chat view).

    Raises:
        ValueError: the converter refuses the body (the message names the path).
    """
    if api == ANTHROPIC_MESSAGES:
        return anthropic_to_openai(body).body
    if api == OPENAI_RESPONSES:
        return responses_to_chat(body).body
    return dict(body)


class LocalBackend:
    """The in-process engine.

    Args:
        engine: a ready ``LocalEngine``; or None to build one from ``model``
            (None = the embedded model) and ``engine_options``.
        max_tokens: output tokens per request (1 is enough: the recorded
            assistant turns stay as they are).
    """

    oracle_exact = True

    def __init__(self, engine: Any = None, *, model: str | None = None, max_tokens: int = 1,
                 **engine_options: Any) -> None:
        if engine is None:
            from local_backend.loader import build_engine

            engine = build_engine(model, **engine_options)
        from local_backend.sampling_params import SamplingParams

        self.engine = engine
        self.name = "local"
        loaded = getattr(engine, "loaded", None)
        self.notice = None
        if getattr(loaded, "is_embedded", False):
            from local_backend.embedded import EMBEDDED_NOTICE

            self.notice = EMBEDDED_NOTICE
        self.model = engine.model_name
        self.block_size = engine.block_size
        self.params = SamplingParams(max_tokens=max_tokens, temperature=0.0)

    def prompt_ids(self, api: str, body: Mapping[str, Any]) -> list[int]:
        """The prompt token ids the engine will see.

        Raises:
            ValueError: the body cannot be rendered (the message says why, as the provider's 400 would).
        """
        from local_backend.chat_template import anthropic_prompt, openai_chat_prompt, responses_prompt
        from local_backend.errors import InvalidBodyError

        render = {ANTHROPIC_MESSAGES: anthropic_prompt, OPENAI_RESPONSES: responses_prompt}.get(api, openai_chat_prompt)
        try:
            return render(self.engine.tokenizer, body).token_ids
        except InvalidBodyError as exc:
            raise ValueError(exc.message) from exc

    def run(self, api: str, body: Mapping[str, Any], prompt_ids: list[int]) -> Replay:
        """Generate ``max_tokens`` greedily for ``prompt_ids`` (``body`` is not used: the prompt is already
        rendered) and return the engine's prompt length, prefix hit (tokens), TTFT (seconds) and output ids.

        Raises:
            InvalidRequestError (ValueError): the engine refuses the prompt (longer than the context, ...).
            Exception: whatever a model forward pass raised.
        """
        (out,) = self.engine.generate([prompt_ids], self.params)
        return Replay(len(out.prompt_token_ids), out.num_cached_tokens, out.metrics.ttft,
                      list(out.outputs[0].token_ids))

    def reset_cache(self) -> bool:
        """Forget every cached block (True), so the replay starts cold; False while requests are running."""
        return self.engine.reset_prefix_cache()

    def close(self) -> None:
        """Nothing to release (the engine belongs to the caller or is garbage collected)."""


class HTTPBackend:
    """An OpenAI-compatible server at ``url`` (``http://host:port`` or ``http://host:port/v1``).

    Args:
        url: the server's address.
        model: the model name to send [default: the first of ``/v1/models``].
        max_tokens: output tokens per request.
        block_size: the server's KV block size, for the oracle's rounding
            (16 for ``serve`` and vLLM; 1 for SGLang's token-level radix cache).
        api_key: sent as the bearer token, for servers started with ``--api-key``
            [default: ``$OPENAI_API_KEY``, else a placeholder].
        timeout: seconds per request.
        http_client: an ``httpx.Client`` to send through (e.g. a test client); default: a new one.

    Raises:
        ImportError: the ``openai`` package is missing (message names the install command).
        BackendError: the server cannot be reached, refuses the API key, or lists no model while none was given.
    """

    notice = None

    def __init__(self, url: str, *, model: str | None = None, max_tokens: int = 1, block_size: int = 16,
                 api_key: str | None = None, timeout: float = 600.0, http_client: Any = None) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ImportError(f"verify --backend URL needs the openai client ({exc}): {OPENAI_INSTALL}") from exc
        root = url.rstrip("/")
        root = root[:-3] if root.endswith("/v1") else root
        self.name = root
        self.block_size = block_size
        self.max_tokens = max_tokens
        self._openai = openai
        self._owns_http = http_client is None
        self._client = openai.OpenAI(base_url=f"{root}/v1", api_key=api_key or os.environ.get("OPENAI_API_KEY")
                                     or "not-needed", timeout=timeout, max_retries=0, http_client=http_client)
        self._auto_tool_choice = True
        self.model = self._check_server(model)
        self.oracle_exact = True
        self.notes: list[str] = []

    def _check_server(self, model: str | None) -> str:
        """Reach ``/v1/models`` once (so an unreachable server fails before the replay); the model to send."""
        openai = self._openai
        try:
            listed = [m.id for m in self._client.models.list().data]
        except openai.APIConnectionError as exc:  # timeouts included
            raise BackendError(f"cannot reach {self.name} ({exc.__cause__ or exc}); start the server (promptcache "
                               "serve, vllm serve, sglang.launch_server) or check the URL and port") from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise BackendError(f"{self.name} refused the API key ({exc.status_code}): pass --api-key KEY or set "
                               "OPENAI_API_KEY to the key the server was started with") from exc
        except openai.APIStatusError as exc:
            if model is None:
                raise BackendError(f"{self.name}/v1/models answered {exc.status_code}; pass --model NAME") from exc
            return model
        if model is None:
            if not listed:
                raise BackendError(f"{self.name}/v1/models lists no model; pass --model NAME")
            model = listed[0]
        return model

    def prompt_ids(self, api: str, body: Mapping[str, Any]) -> list[int]:
        """Token ids from the server's ``/tokenize``; the local ChatML tokenizer when it has none.

        Raises:
            ValueError: the body cannot be converted, or ``/tokenize`` refuses it.
        """
        chat = openai_body(api, body)
        if self.oracle_exact:
            payload = {"model": self.model, "messages": chat["messages"], "add_generation_prompt": True}
            if chat.get("tools"):
                payload["tools"] = chat["tools"]
            try:
                return list(self._post("/tokenize", payload)["tokens"])
            except self._openai.APIStatusError as exc:
                if exc.status_code not in (404, 405, 501):
                    raise ValueError(f"/tokenize refused the request ({exc.status_code}): {exc.message}") from exc
            self.oracle_exact = False
            self.notes.append(f"{self.name} has no /tokenize endpoint: the oracle uses the local ChatML tokenizer "
                              "(cl100k), so oracle figures and divergence offsets are approximate")
        from promptcache.tokens.chatml import encode_chatml

        return encode_chatml(chat["messages"], chat.get("tools"))

    def run(self, api: str, body: Mapping[str, Any], prompt_ids: list[int]) -> Replay:
        """Stream one request (``max_tokens`` output tokens, greedy) and read its usage.

        ``prompt_ids`` is not sent (the server renders the body itself). Tools go with the trace's own
        ``tool_choice``, or ``"auto"``; see the module docstring for servers that refuse ``"auto"``.

        Returns:
            The server's prompt tokens and ``cached_tokens``, and the TTFT (seconds to the first chunk).

        Raises:
            ValueError: the server sent no usage (it must support ``stream_options.include_usage``).
            openai.APIError: the server refused or failed the request.
        """
        chat = openai_body(api, body)
        extra: dict[str, Any] = {}
        if chat.get("tools"):
            extra = {"tools": chat["tools"], "tool_choice": chat.get("tool_choice") or "auto"}
            if extra["tool_choice"] == "auto" and not self._auto_tool_choice:
                extra["tool_choice"] = "none"
        try:
            return self._stream(chat["messages"], extra)
        except self._openai.BadRequestError as exc:
            if extra.get("tool_choice") != "auto" or not any(w in str(exc.message) for w in AUTO_TOOL_CHOICE_REFUSED):
                raise
            self._auto_tool_choice = False
            self.notes.append(f"{self.name} refused tool_choice 'auto' ({exc.message}); tools are sent with "
                              "tool_choice 'none', which vLLM still renders into the prompt (unless started with "
                              "--exclude-tools-when-tool-choice-none); start vLLM with --enable-auto-tool-choice "
                              "--tool-call-parser NAME to replay 'auto' as recorded")
            return self._stream(chat["messages"], {**extra, "tool_choice": "none"})

    def _stream(self, messages: list[dict[str, Any]], extra: dict[str, Any]) -> Replay:
        started = time.perf_counter()
        ttft = None
        usage = None
        stream = self._client.chat.completions.create(
            model=self.model, messages=messages, max_tokens=self.max_tokens, temperature=0.0, stream=True,
            stream_options={"include_usage": True}, **extra)
        for chunk in stream:
            if ttft is None and chunk.choices:
                ttft = time.perf_counter() - started
            if chunk.usage is not None:
                usage = chunk.usage
        if usage is None:
            raise ValueError("the server sent no usage; it must support stream_options.include_usage")
        details = usage.prompt_tokens_details
        cached = getattr(details, "cached_tokens", None) if details is not None else None
        if cached is None:
            note = ("the server reports no prompt_tokens_details.cached_tokens (vLLM: start it with "
                    "--enable-prompt-tokens-details; SGLang: --enable-cache-report); cached tokens read as 0")
            if note not in self.notes:
                self.notes.append(note)
            cached = 0
        return Replay(usage.prompt_tokens, cached, ttft)

    def reset_cache(self) -> bool:
        """Ask the server to forget its prefix cache: ``POST /v1/cache/reset`` (``promptcache serve``), else
        ``POST /reset_prefix_cache`` (vLLM, SGLang: ``/flush_cache``). True when one of them answered 200."""
        for path in ("/v1/cache/reset", "/reset_prefix_cache", "/flush_cache"):
            try:
                self._post(path, None)
                return True
            except self._openai.APIStatusError:
                continue
            except self._openai.APIConnectionError as exc:
                raise BackendError(f"cannot reach {self.name} to reset its cache ({exc.__cause__ or exc})") from exc
        return False

    def _post(self, path: str, body: Any) -> Any:
        """POST ``body`` to ``path`` under the server root (not ``/v1``) with the openai client; the JSON answer."""
        return self._client.post(f"{self.name}{path}", body=body, cast_to=object)

    def close(self) -> None:
        """Close the HTTP connections (not a client given as ``http_client``)."""
        if self._owns_http:
            self._client.close()


def make_backend(backend: str = "local", *, model: str | None = None, max_tokens: int = 1, block_size: int = 16,
                 api_key: str | None = None, **engine_options: Any) -> LocalBackend | HTTPBackend:
    """A backend for ``--backend``: ``"local"`` (the in-process engine) or an ``http(s)://`` URL.

    For ``local``, ``model`` is a model directory (None = embedded) and
    ``engine_options`` go to ``LocalEngine`` (``kv_cache_mb``, ``num_blocks``,
    ``eviction``, ``tokenizer``, ...; None values dropped). For a URL, ``model`` is the model
    name to send, ``api_key`` the bearer token (default ``$OPENAI_API_KEY``), and the engine options
    are not used. ``backend.notice`` is a line to show the user (the embedded model's) or None.

    Raises:
        ValueError: ``backend`` is neither ``local`` nor a URL; a model that cannot be loaded
            (``ModelLoadError``, the message names the path and what to pass) or a bad engine option.
        ImportError: the backend's packages are missing (the message names the install command).
        BackendError: the URL cannot be reached or refuses the key (the message says what to do).
    """
    if backend == "local":
        return LocalBackend(model=model, max_tokens=max_tokens, block_size=block_size, **engine_options)
    if backend.startswith(("http://", "https://")):
        return HTTPBackend(backend, model=model, max_tokens=max_tokens, block_size=block_size, api_key=api_key)
    raise ValueError(f"--backend must be 'local' or an http(s):// URL, not {backend!r}")
