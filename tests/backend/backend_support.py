"""Builders shared by the engine tests: tiny random models (no download), token ids, bare requests.

A uniquely named module (not ``conftest``/``helpers``), so test files import it
unambiguously whichever test folders pytest puts on ``sys.path``.
"""

from __future__ import annotations

import random

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from local_backend.hashing import root_extra_keys
from local_backend.request import Request
from local_backend.sampling_params import SamplingParams

VOCAB = 512
CONTEXT = 1024
FINGERPRINT = "test-model"


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


def random_tokens(n: int, seed: int, vocab: int = VOCAB) -> list[int]:
    """``n`` reproducible token ids in ``[0, vocab)``."""
    rng = random.Random(seed)
    return [rng.randrange(vocab) for _ in range(n)]


def make_request(request_id: str, tokens: list[int], block_size: int = 4, salt: str | None = None,
                 max_tokens: int = 4, fingerprint: str = FINGERPRINT, **kwargs) -> Request:
    """A request whose block hashes use ``fingerprint`` and ``salt``."""
    return Request(request_id, tokens, SamplingParams(max_tokens=max_tokens, temperature=0.0), block_size,
                   root_extra_keys(fingerprint, salt), **kwargs)


def admit(kv, request: Request) -> int:
    """Admit ``request`` the way the scheduler does (prefix hit, then slots for the rest); return the hit."""
    hits, num_hit = kv.get_computed_blocks(request)
    assert kv.allocate_slots(request, request.num_tokens - num_hit, hits)
    kv.record_admission(request, num_hit)
    request.num_computed_tokens = num_hit
    return num_hit


def compute_all(kv, request: Request) -> None:
    """Pretend the model computed every known token (the KV itself is not needed here)."""
    request.num_computed_tokens = request.num_tokens
    kv.cache_blocks(request)
