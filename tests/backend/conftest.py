"""Fixtures of the engine tests: tiny random Llama and Qwen2 models built from a config (no download)."""

from __future__ import annotations

import pytest
from backend_support import MODELS, tiny_llama


@pytest.fixture(scope="session", params=sorted(MODELS))
def tiny_model(request):
    """Each tiny architecture in turn (session-scoped: build once, never mutated by the engine)."""
    return MODELS[request.param]()


@pytest.fixture(scope="session")
def llama_model():
    return tiny_llama()
