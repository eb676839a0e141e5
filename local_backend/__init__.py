"""local_backend: a real PyTorch engine with a paged KV cache and automatic prefix caching.

    from local_backend import LocalEngine, SamplingParams

    engine = LocalEngine()                       # embedded default model, no download
    outs = engine.generate(["a prompt", ...], SamplingParams(max_tokens=8, temperature=0.0))
    outs[0].num_cached_tokens, outs[0].outputs[0].token_ids, outs[0].metrics.ttft
    engine.stats()["prefix_cache"]["hit_rate"]

The embedded model has random weights: its text is meaningless, but token
counts, KV cache behaviour and timings are real. See ``docs/local-backend.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from local_backend.errors import (
    DuplicateRequestError,
    EmptyPromptError,
    InvalidRequestError,
    InvalidSamplingParamsError,
    ModelLoadError,
    ModelNotFoundError,
    OutOfVocabularyError,
    PromptTooLongError,
    VocabularyWarning,
)
from local_backend.sampling_params import SamplingParams

if TYPE_CHECKING:
    from local_backend.engine import LocalEngine
    from local_backend.outputs import CompletionOutput, RequestMetrics, RequestOutput, StepOutput

__all__ = [
    "CompletionOutput",
    "DuplicateRequestError",
    "EmptyPromptError",
    "InvalidRequestError",
    "InvalidSamplingParamsError",
    "LocalEngine",
    "ModelLoadError",
    "ModelNotFoundError",
    "OutOfVocabularyError",
    "PromptTooLongError",
    "RequestMetrics",
    "RequestOutput",
    "SamplingParams",
    "StepOutput",
    "VocabularyWarning",
]

_LAZY = {
    "LocalEngine": "local_backend.engine",
    "CompletionOutput": "local_backend.outputs",
    "RequestMetrics": "local_backend.outputs",
    "RequestOutput": "local_backend.outputs",
    "StepOutput": "local_backend.outputs",
}


def __getattr__(name: str) -> Any:
    """Import torch-heavy names on first use, so ``SamplingParams`` and the errors load without torch."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'local_backend' has no attribute {name!r}")
