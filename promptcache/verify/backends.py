"""Where ``promptcache verify`` replays a trace: the in-process engine, or any OpenAI-compatible server.

A backend turns one trace request into the prompt token ids the oracle
should see and the figures the backend reports:

* :class:`LocalBackend`: a :class:`~local_backend.engine.LocalEngine` in
  this process. Bodies are rendered by :mod:`local_backend.chat_template`,
  the same code ``promptcache serve`` uses, so the local replay and an HTTP
  replay against ``serve`` see identical tokens. The oracle is exact.
* :class:`~promptcache.verify.http_backend.HTTPBackend`: an OpenAI-compatible URL (``promptcache serve``,
  vLLM, SGLang, llama.cpp's ``llama-server``), each engine through its own routes
  (:mod:`promptcache.verify.engines`).

A server that cannot be reached, or refuses the API key, raises
:class:`BackendError` (the message says what to do); a request the server
refuses raises for that request only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_RESPONSES
from promptcache.verify.engines import LOCAL_CAPACITY_ADVICE
from promptcache.verify.http_backend import BackendError, HTTPBackend
from promptcache.verify.replay import BodyError, OracleError, Replay, openai_body

__all__ = ["BackendError", "BodyError", "HTTPBackend", "LocalBackend", "OracleError", "Replay", "make_backend",
           "openai_body"]


class LocalBackend:
    """The in-process engine.

    Args:
        engine: a ready ``LocalEngine``; or None to build one from ``model``
            (None = the embedded model) and ``engine_options``.
        max_tokens: output tokens per request (1 is enough: the recorded
            assistant turns stay as they are).
    """

    oracle_exact = True
    oracle_source = "the engine's own chat template and tokenizer"
    engine_name = "local"
    capacity_advice = LOCAL_CAPACITY_ADVICE
    reset_advice = None  # it can reset: hits above the oracle say "rerun with --reset-cache"

    def __init__(self, engine: Any = None, *, model: str | None = None, max_tokens: int = 1,
                 **engine_options: Any) -> None:
        if engine is None:
            from local_backend.loader import build_engine

            engine = build_engine(model, **engine_options)
        from local_backend.sampling_params import SamplingParams

        from local_backend.errors import InvalidRequestError

        self.refusals = (InvalidRequestError,)  # what the engine raises when it refuses a prompt
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
            BodyError (ValueError): the body cannot be rendered (the message says why, as the provider's 400 would).
        """
        from local_backend.chat_template import anthropic_prompt, openai_chat_prompt, responses_prompt
        from local_backend.errors import InvalidBodyError

        render = {ANTHROPIC_MESSAGES: anthropic_prompt, OPENAI_RESPONSES: responses_prompt}.get(api, openai_chat_prompt)
        try:
            return render(self.engine.tokenizer, body).token_ids
        except InvalidBodyError as exc:
            raise BodyError(exc.message) from exc

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

    def reset_cache(self) -> tuple[bool, str | None]:
        """Forget every cached block, so the replay starts cold: ``(True, None)``, or ``(False, why)`` while
        requests are running."""
        if self.engine.reset_prefix_cache():
            return True, None
        return False, "the engine refuses a reset while requests are running"

    def close(self) -> None:
        """Nothing to release (the engine belongs to the caller or is garbage collected)."""


def make_backend(backend: str = "local", *, model: str | None = None, max_tokens: int = 1,
                 block_size: int | None = None, api_key: str | None = None, engine: str | None = None,
                 **engine_options: Any) -> LocalBackend | HTTPBackend:
    """A backend for ``--backend``: ``"local"`` (the in-process engine) or an ``http(s)://`` URL.

    For ``local``, ``model`` is a model directory (None = embedded) and
    ``engine_options`` go to ``LocalEngine`` (``kv_cache_mb``, ``num_blocks``,
    ``eviction``, ``tokenizer``, ...; None values dropped). For a URL, ``model`` is the model
    name to send, ``api_key`` the bearer token (default ``$OPENAI_API_KEY``), ``engine`` the server's
    engine (None: detected), ``block_size`` its cache granularity (None: read from the server or its
    engine's default), and the engine options are not used. ``block_size`` None means 16 for ``local``.
    ``backend.notice`` is a line to show the user (the embedded model's) or None.

    Raises:
        ValueError: ``backend`` is neither ``local`` nor a URL; a model that cannot be loaded
            (``ModelLoadError``, the message names the path and what to pass) or a bad engine option.
        ImportError: the backend's packages are missing (the message names the install command).
        BackendError: the URL cannot be reached or refuses the key (the message says what to do).
    """
    if backend == "local":
        if engine not in (None, "local"):
            raise ValueError(f"--engine {engine} needs --backend URL (the local engine is promptcache's own)")
        return LocalBackend(model=model, max_tokens=max_tokens, block_size=block_size or 16, **engine_options)
    if backend.startswith(("http://", "https://")):
        return HTTPBackend(backend, model=model, max_tokens=max_tokens, block_size=block_size, api_key=api_key,
                           engine=engine)
    raise ValueError(f"--backend must be 'local' or an http(s):// URL, not {backend!r}")
