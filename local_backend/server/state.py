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

DEFAULT_MAX_TOKENS = 256
"""Output tokens when an OpenAI request gives no ``max_tokens`` (the embedded model's text is meaningless;
a long default would only cost time). Anthropic requests must give ``max_tokens`` (as the real API requires)."""


@dataclass
class ServerState:
    """Shared state of one server.

    Attributes:
        engine: the engine (read-only here: tokenizer, names, limits; only ``loop`` calls into it).
        loop: the engine-loop thread.
        served_model_names: model names accepted; empty means any name is served by the loaded model.
        default_max_tokens: output tokens of OpenAI requests that give none.
        metrics: the server's Prometheus metrics.
    """

    engine: LocalEngine
    loop: EngineLoop
    served_model_names: tuple[str, ...] = ()
    default_max_tokens: int = DEFAULT_MAX_TOKENS
    metrics: ServerMetrics = field(default_factory=ServerMetrics)
    created: int = field(default_factory=lambda: int(time.time()))

    @property
    def tokenizer(self):
        return self.engine.tokenizer

    @property
    def model_names(self) -> Sequence[str]:
        """What ``/v1/models`` lists: the served names, else the loaded model's name."""
        return self.served_model_names or (self.engine.model_name,)

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
