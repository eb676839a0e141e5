"""Fixtures of the engine tests: tiny random Llama and Qwen2 models built from a config (no download)."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

VOCAB = 512
CONTEXT = 1024


def tiny_llama(seed: int = 0) -> LlamaForCausalLM:
    """2 layers, width 64, 4 query / 2 KV heads: a GQA Llama small enough for many CPU steps per second."""
    config = LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=CONTEXT, initializer_range=0.5, eos_token_id=None,
        bos_token_id=None, pad_token_id=None, tie_word_embeddings=False,
    )
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LlamaForCausalLM(config).eval()


def tiny_qwen2(seed: int = 0) -> Qwen2ForCausalLM:
    """The Qwen2 shape (q/k/v biases) at the same tiny size."""
    config = Qwen2Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=CONTEXT, initializer_range=0.5, eos_token_id=None,
        bos_token_id=None, pad_token_id=None, tie_word_embeddings=False, use_sliding_window=False,
    )
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Qwen2ForCausalLM(config).eval()


MODELS = {"llama": tiny_llama, "qwen2": tiny_qwen2}


@pytest.fixture(scope="session", params=sorted(MODELS))
def tiny_model(request):
    """Each tiny architecture in turn (session-scoped: build once, never mutated by the engine)."""
    return MODELS[request.param]()


@pytest.fixture(scope="session")
def llama_model():
    return tiny_llama()


def random_tokens(n: int, seed: int, vocab: int = VOCAB) -> list[int]:
    """``n`` reproducible token ids in ``[0, vocab)``."""
    rng = random.Random(seed)
    return [rng.randrange(vocab) for _ in range(n)]
