"""What every handler of one server shares: the engine loop, the tokenizer, model names, metrics."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from local_backend.engine import LocalEngine
from local_backend.server.engine_loop import EngineLoop
from local_backend.server.errors import APIError
from local_backend.server.metrics import ServerMetrics
from promptcache.trace.chain import ChainResolver

DEFAULT_MAX_TOKENS = 256
"""Output tokens when an OpenAI request gives no ``max_tokens`` (the embedded model's text is meaningless;
a long default would only cost time). Anthropic requests must give ``max_tokens`` (as the real API requires)."""
RESPONSES_KEPT = 1024
"""How many recent ``/v1/responses`` replies the server keeps for ``previous_response_id`` (oldest dropped first)."""


@dataclass
class ServerState:
    """Shared state of one server.

    Attributes:
        engine: the engine (read-only here: tokenizer, names, limits; only ``loop`` calls into it).
        loop: the engine-loop thread.
        served_model_names: model names accepted; empty means any name is served by the loaded model.
        default_max_tokens: output tokens of OpenAI requests that give none.
        metrics: the server's Prometheus metrics.
        responses: the recent Responses API replies, for ``previous_response_id`` (:data:`RESPONSES_KEPT` at most).
    """

    engine: LocalEngine
    loop: EngineLoop
    served_model_names: tuple[str, ...] = ()
    default_max_tokens: int = DEFAULT_MAX_TOKENS
    metrics: ServerMetrics = field(default_factory=ServerMetrics)
    created: int = field(default_factory=lambda: int(time.time()))
    responses: ChainResolver = field(default_factory=lambda: ChainResolver(max_responses=RESPONSES_KEPT))

    @property
    def tokenizer(self):
        return self.engine.tokenizer

    @property
    def model_names(self) -> Sequence[str]:
        """What ``/v1/models`` lists: the served names, else the loaded model's name."""
        return self.served_model_names or (self.engine.model_name,)

    def max_tokens(self, requested: int | None, prompt_tokens: int, param: str = "max_tokens") -> int:
        """Output tokens for a prompt of ``prompt_tokens``: ``requested`` if it fits the context, or (None) the
        default, capped to the room left (vLLM's rules).

        A prompt longer than the context is left to the engine (its ``context_length_exceeded`` 400).

        Raises:
            APIError: 400 when ``requested`` > context - prompt (vLLM's message: "'max_tokens' is too
                large: N. This model's maximum context length is M tokens and your request has P input
                tokens"), or no token fits after the prompt.
        """
        limit = self.engine.max_model_len
        if prompt_tokens > limit:
            return requested or self.default_max_tokens
        room = limit - prompt_tokens
        if requested is None:
            if room < 1:
                raise APIError(400, f"This model's maximum context length is {limit} tokens. However, your request "
                                    f"has {prompt_tokens} input tokens, which leaves no room for output. Shorten the "
                                    "messages.", param="messages", code="context_length_exceeded")
            return min(self.default_max_tokens, room)
        if requested > room:
            raise APIError(400, f"'{param}' is too large: {requested}. This model's maximum context length is {limit} "
                                f"tokens and your request has {prompt_tokens} input tokens ({requested} > {limit} - "
                                f"{prompt_tokens}). Lower {param} to at most {max(room, 0)} or shorten the prompt.",
                           param=param)
        return requested

    def check_model(self, model: object) -> str:
        """The model name a response reports for a request naming ``model``.

        Any name is served by the loaded model unless ``--served-model-name`` restricts it.

        Raises:
            APIError: 400 when ``model`` is missing or not a string; 404 when it is not served.
        """
        if not isinstance(model, str) or not model:
            raise APIError(400, "model: a model name (string) is required", param="model")
        if self.served_model_names and model not in self.served_model_names:
            raise APIError(404, f"The model `{model}` does not exist. This server serves: "
                                f"{', '.join(self.served_model_names)}.", param="model", code="model_not_found")
        return model


def new_id(prefix: str) -> str:
    """A fresh request id such as ``chatcmpl-1f3a...`` or ``msg_1f3a...``."""
    return f"{prefix}{uuid.uuid4().hex}"
