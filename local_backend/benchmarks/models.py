"""The models the engine benchmarks run: the embedded default, or a tiny model with the same vocabulary."""

from __future__ import annotations

import functools
from typing import Any

import torch

from local_backend.embedded import EMBEDDED_VOCAB

MODEL_NAMES = ("embedded", "tiny")


@functools.lru_cache(maxsize=1)
def tiny_model() -> Any:
    """A 2-layer, width-64 Llama with the embedded model's vocabulary and context (seeded random weights).

    The cache-behaviour benchmarks (hit rates, eviction, fragmentation) run on
    it: hit counts and block accounting do not depend on the model's width,
    and it keeps those runs short. Timing benchmarks use the embedded model.
    Built once per process (CPU, fp32); engines given it run it where it is.
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
    """The ``model`` argument of ``LocalEngine`` for a benchmark model name.

    Returns:
        None for ``"embedded"`` (the engine's default model), :func:`tiny_model` for ``"tiny"``.

    Raises:
        ValueError: another name.
    """
    if name == "embedded":
        return None
    if name == "tiny":
        return tiny_model()
    raise ValueError(f"unknown benchmark model {name!r}; use one of {', '.join(MODEL_NAMES)}")


def hf_model(name: str) -> Any:
    """The transformers model object behind ``name`` (for the ``generate`` / ``generate_batch`` baselines).

    Raises:
        ValueError: a name other than ``"embedded"`` or ``"tiny"``.
    """
    if name == "embedded":
        from local_backend.embedded import build_embedded_model

        return build_embedded_model()
    resolve_model(name)  # validates the name
    return tiny_model()
