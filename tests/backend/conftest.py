"""Fixtures of the engine tests: tiny random Llama and Qwen2 models built from a config (no download).

The session models are CPU fp32 and must stay so: tests build engines with
``backend_support.cpu_engine`` (pinned to CPU fp32) or through a
``Numerics`` fixture, which moves a *copy* of the model to another device.
Transformers' deprecation warning for the ``past_key_values=`` keyword is an
error here, so the model runner cannot fall back to the old keyword unnoticed.
"""

from __future__ import annotations

import warnings

import pytest
from backend_support import MODELS, NUMERICS, selected_numerics, tiny_llama


@pytest.fixture(autouse=True)
def _deprecated_cache_keyword_is_an_error():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*past_key_values.*", category=FutureWarning)
        yield


@pytest.fixture(scope="session", params=sorted(MODELS))
def tiny_model(request):
    """Each tiny architecture in turn, CPU fp32 (session-scoped: build once, never mutated by the engine)."""
    return MODELS[request.param]()


@pytest.fixture(scope="session")
def llama_model():
    """The tiny Llama, CPU fp32."""
    return tiny_llama()


@pytest.fixture(scope="session", params=selected_numerics())
def numerics(request):
    """A device/dtype with its tolerances (see ``backend_support.NUMERICS``); skipped where the device is missing."""
    chosen = NUMERICS[request.param]
    if not chosen.available():
        pytest.skip(f"{chosen.name}: no {chosen.device} device here")
    return chosen


@pytest.fixture(scope="session")
def placed_model(tiny_model, numerics):
    """``tiny_model`` on ``numerics``' device and dtype (a copy unless that is CPU fp32)."""
    return numerics.place(tiny_model)


@pytest.fixture(scope="session")
def placed_llama(llama_model, numerics):
    """``llama_model`` on ``numerics``' device and dtype (a copy unless that is CPU fp32)."""
    return numerics.place(llama_model)
