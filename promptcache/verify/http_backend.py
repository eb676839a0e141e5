"""``verify --backend URL``: replay a trace on an OpenAI-compatible server (promptcache serve, vLLM, SGLang,
llama.cpp's ``llama-server``), with each engine's own routes for the oracle's tokens, the cache reset and the
cache granularity (:mod:`promptcache.verify.engines`).

Anthropic bodies are converted with :func:`promptcache.convert.anthropic_to_openai` and OpenAI Responses bodies
read through their Chat view (:func:`promptcache.convert.responses_to_chat`), so they replay on any Chat
Completions server; each request is streamed (TTFT = time to the first chunk) and
``usage.prompt_tokens_details.cached_tokens`` is read from the final usage chunk. Tool definitions go with the
trace's own ``tool_choice`` (``"auto"`` when it has none): SGLang renders tools into the prompt only when
``tool_choice`` is not ``"none"``. A server that refuses ``"auto"`` (vLLM without ``--enable-auto-tool-choice``)
gets ``"none"`` instead, which vLLM still renders, and a note says so. ``max_tokens`` stays small, so no real
tool call is parsed or matters.

A server that cannot be reached, refuses the API key, or still answers 503 (loading) after ``ready_timeout``
seconds raises :class:`BackendError` (the message says what to do); a request the server refuses raises for
that request only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from promptcache.verify.engines import (ENGINE_NAMES, GENERIC, LOCAL_CHATML_NOTE, engine_from_owner, profile,
                                        vllm_block_size)
from promptcache.verify.replay import OracleError, Replay, openai_body

OPENAI_INSTALL = "pip install 'promptcache[openai]'"
AUTO_TOOL_CHOICE_REFUSED = ("tool choice", "tool_choice", "tool-call-parser", "enable-auto-tool-choice")
"""Words of a 400 refusing ``tool_choice: "auto"`` (vLLM: '"auto" tool choice requires --enable-auto-tool-choice
and --tool-call-parser to be set')."""
READY_TIMEOUT_S = 120.0
"""How long a server answering 503 (model still loading) is waited for before verify gives up (seconds)."""
ORACLE_SOURCES = {"tokenize-messages": "the server's /tokenize (chat messages)",
                  "apply-template+tokenize": "the server's /apply-template + /tokenize",
                  "local-chatml": "the local ChatML tokenizer (cl100k), not the server's template"}


class BackendError(RuntimeError):
    """The backend cannot be used at all: unreachable, not ready, or it refuses the API key. The message says
    what to do."""


class HTTPBackend:
    """An OpenAI-compatible server at ``url`` (``http://host:port`` or ``http://host:port/v1``).

    Args:
        url: the server's address.
        model: the model name to send [default: the first of ``/v1/models``].
        max_tokens: output tokens per request.
        block_size: the server's cache granularity in tokens, for the oracle's rounding [default: read from the
            server where it exposes it (SGLang's ``page_size``, vLLM's ``/metrics``), else the engine's default:
            1 for llama.cpp, 16 for vLLM and promptcache serve].
        api_key: sent as the bearer token [default: ``$OPENAI_API_KEY``, else a placeholder].
        timeout: seconds per request.
        http_client: an ``httpx2.Client`` (the openai SDK's) to send through (e.g. a test client); default: a new one.
        engine: the engine's name (:data:`~promptcache.verify.engines.ENGINE_NAMES`; ``openai`` for any other
            OpenAI-compatible server) [default: detected from ``/v1/models``' ``owned_by``, else from the routes it
            answers, else ``openai``].
        ready_timeout: seconds to keep retrying a server that answers 503 while loading.

    Attributes:
        engine / profile: the engine and its :class:`~promptcache.verify.engines.EngineProfile`.
        oracle_exact: the oracle's tokens are the server's own; ``oracle_source`` says where they come from.
        notes: lines for the report (fallbacks, refused options, an ``engine`` the server contradicts).
        refusals: the exceptions by which the server refuses a request (``openai.APIStatusError``).
        reset_advice: what to do instead of ``--reset-cache`` when the engine has no reset route, else None.

    Raises:
        ImportError: the ``openai`` package is missing (message names the install command).
        BackendError: unreachable, not ready, refuses the API key, or lists no model while none was given.
        ValueError: an unknown ``engine`` name.
    """

    notice = None

    def __init__(self, url: str, *, model: str | None = None, max_tokens: int = 1, block_size: int | None = None,
                 api_key: str | None = None, timeout: float = 600.0, http_client: Any = None,
                 engine: str | None = None, ready_timeout: float = READY_TIMEOUT_S) -> None:
        try:
            import httpx2  # the openai SDK's HTTP package: one client for its calls and the engine routes
            import openai
        except ImportError as exc:
            raise ImportError(f"verify --backend URL needs the openai client ({exc}): {OPENAI_INSTALL}") from exc
        root = url.rstrip("/")
        root = root[:-3] if root.endswith("/v1") else root
        self.name = root
        self.max_tokens = max_tokens
        self.notes: list[str] = []
        self._openai = openai
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx2.Client(timeout=timeout)
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._headers = {"Authorization": f"Bearer {key}"}
        self._client = openai.OpenAI(base_url=f"{root}/v1", api_key=key, timeout=timeout, max_retries=0,
                                     http_client=self._http)
        self._auto_tool_choice = True
        self.refusals = (openai.APIStatusError,)
        if engine is not None:
            profile(engine)  # an unknown name fails before any request
        self.model, owned_by = self._check_server(model, ready_timeout)
        said = engine_from_owner(owned_by)
        if engine is not None and said is not None and said != engine:
            self.notes.append(f"warning: --engine {engine} was passed, but the server says it is {said} (its "
                              f"/v1/models owned_by is {owned_by!r}): routes and advice are {engine}'s; drop "
                              f"--engine or pass --engine {said}")
        self.engine = engine or said or self._probe_engine()
        self.profile = profile(self.engine)
        self.reset_advice = None if self.profile.reset_path else self.profile.reset_advice
        self.oracle = self.profile.oracle
        self.oracle_exact = self.oracle != "local-chatml"
        if not self.oracle_exact:
            server = "this server" if self.engine == GENERIC else self.engine
            self.notes.append(LOCAL_CHATML_NOTE.format(engine=server))
        self.block_size = block_size or self._server_block_size()

    @property
    def engine_name(self) -> str:
        """The engine's name (:data:`~promptcache.verify.engines.ENGINE_NAMES`)."""
        return self.engine

    @property
    def capacity_advice(self) -> str:
        """How to give this engine room for more cached prefixes (the engine verdict's advice)."""
        return self.profile.capacity_advice

    @property
    def oracle_source(self) -> str:
        """Where the oracle's token ids come from (a phrase for the report and the JSON)."""
        return ORACLE_SOURCES[self.oracle]

    # -- the server's identity -------------------------------------------------------------------------------

    def _check_server(self, model: str | None, ready_timeout: float) -> tuple[str, str | None]:
        """Reach ``/v1/models`` (retrying 503 for ``ready_timeout`` s); the model to send and its ``owned_by``."""
        openai = self._openai
        deadline = time.monotonic() + ready_timeout
        while True:
            try:
                listed = self._client.models.list().data
                break
            except openai.APIConnectionError as exc:  # timeouts included
                raise BackendError(f"cannot reach {self.name} ({exc.__cause__ or exc}); start the server (promptcache "
                                   "serve, vllm serve, sglang.launch_server, llama-server) or check the URL and "
                                   "port") from exc
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise BackendError(f"{self.name} refused the API key ({exc.status_code}): pass --api-key KEY or set "
                                   "OPENAI_API_KEY to the key the server was started with") from exc
            except openai.APIStatusError as exc:
                if exc.status_code == 503:
                    if time.monotonic() < deadline:
                        time.sleep(min(1.0, ready_timeout / 10 or 0.01))
                        continue
                    raise BackendError(f"{self.name} is not ready: it still answered 503 ({_message(exc.response)}) "
                                       f"after {ready_timeout:g} s; wait until it has loaded the model (llama-server "
                                       "logs 'server is listening', vLLM 'Application startup complete') and "
                                       "rerun") from exc
                if model is None:
                    raise BackendError(f"{self.name}/v1/models answered {exc.status_code}: check that the URL is an "
                                       "OpenAI-compatible server's root (or its /v1); if it is, pass --model NAME") from exc
                return model, None
        if model is None:
            if not listed:
                raise BackendError(f"{self.name}/v1/models lists no model; pass --model NAME")
            model = listed[0].id
        card = next((m for m in listed if m.id == model), listed[0] if listed else None)
        return model, getattr(card, "owned_by", None)

    def _get(self, path: str) -> Any:
        """GET ``path`` under the server root: the response (any status), or None when it cannot be reached."""
        try:
            return self._http.get(f"{self.name}{path}", headers=self._headers)
        except Exception:  # noqa: BLE001 - a probe: an unreachable route is an absent one
            return None

    def _probe_engine(self) -> str:
        """The engine, told by a route only it answers: llama.cpp ``/props``, SGLang ``/get_server_info``, vLLM
        ``/version``; else ``openai`` (a generic OpenAI-compatible server: a note says so)."""
        for path, key, engine in (("/props", "total_slots", "llama.cpp"), ("/get_server_info", "page_size", "sglang"),
                                  ("/version", "version", "vllm")):
            if key in self._get_json(path):
                return engine
        known = ", ".join(name for name in ENGINE_NAMES if name != GENERIC)
        self.notes.append(f"{self.name} is none of {known} (its /v1/models names no known owner and it answers none "
                          f"of /props, /get_server_info, /version): it is replayed as a generic OpenAI-compatible "
                          "server (--engine openai); pass --engine NAME if it is one of those")
        return GENERIC

    def _get_json(self, path: str) -> dict[str, Any]:
        """GET ``path``: its JSON object when it answers 200 with one, else ``{}`` (absent, refused or not JSON)."""
        response = self._get(path)
        if response is None or response.status_code != 200:
            return {}
        try:
            answer = response.json()
        except ValueError:
            return {}
        return answer if isinstance(answer, dict) else {}

    def _server_block_size(self) -> int:
        """The cache granularity the server exposes, else the engine's default (a note says it was assumed)."""
        found = None
        if self.engine == "sglang":
            found = self._get_json("/get_server_info").get("page_size")
        elif self.engine == "vllm":
            response = self._get("/metrics")
            if response is not None and response.status_code == 200:
                found = vllm_block_size(response.text)
        if isinstance(found, int) and found > 0:
            return found
        size = self.profile.default_block_size
        if self.engine == GENERIC:
            self.notes.append(f"{self.name} does not say how finely it caches: the oracle assumes {size}-token "
                              "blocks; pass --block-size N with the server's granularity (1 for a per-token cache "
                              "such as llama.cpp's, which Ollama and LM Studio run)")
        elif self.engine in ("sglang", "vllm"):
            where = "/get_server_info (page_size)" if self.engine == "sglang" else "/metrics (vllm:cache_config_info)"
            self.notes.append(f"{self.name} does not expose its cache block size at {where}: the oracle assumes "
                              f"{size} ({self.engine}'s default); pass --block-size N if the server was started "
                              "with another")
        return size

    # -- the oracle's tokens ---------------------------------------------------------------------------------

    def prompt_ids(self, api: str, body: Mapping[str, Any]) -> list[int]:
        """The prompt's token ids as the server renders them (its own template and tokenizer), or the local ChatML
        tokenizer's where the engine has no such route.

        Raises:
            BodyError (ValueError): the body cannot be converted to a chat.
            OracleError (ValueError): the server has no such route (another engine: the message says to pass
                --engine), refuses the tokenisation, or returns no tokens for a non-empty chat (a route that did
                not understand the request: an oracle of 0 would be silently wrong).
        """
        chat = openai_body(api, body)
        if self.oracle == "apply-template+tokenize":
            payload = {"messages": chat["messages"], **self._tool_fields(chat)}
            prompt = self._post("/apply-template", payload, "/apply-template").get("prompt")
            if not isinstance(prompt, str) or not prompt:
                raise OracleError(f"{self.name}/apply-template returned no prompt text ({prompt!r:.60}): the oracle "
                                  "cannot be computed")
            tokens = self._post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True},
                                "/tokenize").get("tokens")
            return self._checked(tokens, "/tokenize {'content': <the /apply-template prompt>}")
        if self.oracle == "tokenize-messages":
            payload = {"model": self.model, "messages": chat["messages"], "add_generation_prompt": True}
            if chat.get("tools"):
                payload["tools"] = chat["tools"]
            try:
                tokens = self._post("/tokenize", payload, "/tokenize").get("tokens")
            except _NoRoute:
                self.oracle, self.oracle_exact = "local-chatml", False
                self.notes.append(LOCAL_CHATML_NOTE.format(engine=f"{self.name} (no /tokenize)"))
            else:
                return self._checked(tokens, "/tokenize {'messages': ...}")
        from promptcache.tokens.chatml import encode_chatml

        return encode_chatml(chat["messages"], chat.get("tools"))

    def _checked(self, tokens: Any, route: str) -> list[int]:
        """``tokens`` when it is a non-empty list of ints, else OracleError naming ``route``."""
        if not isinstance(tokens, list) or not tokens or not all(isinstance(t, int) for t in tokens):
            raise OracleError(f"{self.name}{route} returned no token ids ({str(tokens)[:40]}) for a non-empty chat: "
                             f"the request shape is not the one this server ({self.engine}) reads, so the oracle "
                             "cannot be computed; pass --engine NAME if the engine was misdetected")
        return tokens

    def _tool_fields(self, chat: Mapping[str, Any]) -> dict[str, Any]:
        """The ``tools`` / ``tool_choice`` fields sent with a chat (see :meth:`run`)."""
        if not chat.get("tools"):
            return {}
        choice = chat.get("tool_choice") or "auto"
        if choice == "auto" and not self._auto_tool_choice:
            choice = "none"
        return {"tools": chat["tools"], "tool_choice": choice}

    def _post(self, path: str, body: Any, what: str) -> dict[str, Any]:
        """POST JSON to ``path`` under the server root; the JSON object answered.

        Raises:
            _NoRoute (OracleError): 404 / 405 / 501 (the route does not exist there: another engine).
            OracleError: any other refusal (status and the server's message), or an answer that is not JSON.
        """
        try:
            response = self._http.post(f"{self.name}{path}", json=body, headers=self._headers)
        except Exception as exc:  # noqa: BLE001 - reported per request
            raise OracleError(f"{what}: cannot reach {self.name} ({exc})") from exc
        if response.status_code in (404, 405, 501) and not self.profile.reset_route_optional:
            raise _NoRoute(f"{self.name} has no {path} route (it answered {response.status_code}), so it is not "
                           f"{self.engine}'s server: pass --engine with one of {', '.join(ENGINE_NAMES)} "
                           "(openai for any other OpenAI-compatible server)")
        if response.status_code != 200:
            raise OracleError(f"{what} refused the request ({response.status_code}): {_message(response)}")
        try:
            answer = response.json()
        except ValueError as exc:
            raise OracleError(f"{what} answered 200 with no JSON ({response.text[:80]!r})") from exc
        return answer if isinstance(answer, dict) else {}

    # -- the replay -----------------------------------------------------------------------------------------

    def run(self, api: str, body: Mapping[str, Any], prompt_ids: list[int]) -> Any:
        """Stream one request (``max_tokens`` output tokens, greedy) and read its usage (``prompt_ids`` is not
        sent: the server renders the body itself).

        Returns:
            A :class:`~promptcache.verify.replay.Replay`: the server's prompt tokens, ``cached_tokens`` and TTFT.

        Raises:
            BodyError (ValueError): the body cannot be converted to a chat.
            ValueError: the server sent no usage (it must support ``stream_options.include_usage``).
            openai.APIStatusError: the server refused or failed the request (:attr:`refusals`).
            openai.APIConnectionError: the server cannot be reached.
        """
        chat = openai_body(api, body)
        extra = self._tool_fields(chat)
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

    def reset_cache(self) -> tuple[bool, str | None]:
        """Ask the server to empty its prefix cache through its engine's route.

        Returns:
            ``(True, None)`` when it answered 200; else ``(False, what to do)`` (no such route, or refused).

        Raises:
            BackendError: the server cannot be reached.
        """
        path = self.profile.reset_path
        if path is None:
            return False, self.profile.reset_advice
        try:
            response = self._http.post(f"{self.name}{path}", headers=self._headers)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"cannot reach {self.name} to reset its cache ({exc})") from exc
        if response.status_code == 200:
            return True, None
        if response.status_code in (404, 405, 501) and not self.profile.reset_route_optional:
            return False, (f"POST {path} answered {response.status_code}: this server has no {self.engine} reset "
                           f"route, so it may not be {self.engine}'s server (check --engine); restart the server "
                           "to start cold")
        return False, f"POST {path} answered {response.status_code} ({_message(response)}); {self.profile.reset_advice}"

    def close(self) -> None:
        """Close the HTTP connections (not a client given as ``http_client``)."""
        if self._owns_http:
            self._client.close()
            self._http.close()


class _NoRoute(OracleError):
    """The server has no such route (404 / 405 / 501); the message says to check ``--engine``."""


def _message(response: Any) -> str:
    """The error message of a refusal: OpenAI's ``error.message``, FastAPI's ``detail``, or the text."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip()[:200]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if data.get("message") or data.get("detail"):
            return str(data.get("message") or data.get("detail"))
    return str(data)[:200]
