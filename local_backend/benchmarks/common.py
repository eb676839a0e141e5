"""Shared pieces of the engine benchmarks: models, prompts, timing."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any

import torch

from local_backend.embedded import EMBEDDED_VOCAB

TEXT_VOCAB = 100_000
"""Random prompt tokens are drawn below this (ordinary cl100k tokens)."""


@functools.lru_cache(maxsize=1)
def tiny_model() -> Any:
    """A 2-layer, width-64 Llama with the embedded model's vocabulary and context (seeded random weights).

    The cache-behaviour benchmarks (hit rates, eviction, fragmentation) run on
    it: hit counts and block accounting do not depend on the model's width,
    and it keeps those runs short. Timing benchmarks use the embedded model.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=EMBEDDED_VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16_384,
                         initializer_range=0.5, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        return LlamaForCausalLM(config).eval()


def resolve_model(name: str) -> Any:
    """``"embedded"`` -> None (the engine's default model), ``"tiny"`` -> :func:`tiny_model`."""
    if name == "embedded":
        return None
    if name == "tiny":
        return tiny_model()
    raise ValueError(f"unknown benchmark model {name!r}; use 'embedded' or 'tiny'")


def hf_model(name: str) -> Any:
    """The transformers model object behind ``name`` (for the ``generate`` baselines)."""
    if name == "embedded":
        from local_backend.embedded import build_embedded_model

        return build_embedded_model()
    return tiny_model()


def random_prompt(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(TEXT_VOCAB) for _ in range(n)]


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` ``repeats`` times; return the fastest wall time in seconds and that run's result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - start
        if elapsed < best:
            best, result = elapsed, value
    return best, result
