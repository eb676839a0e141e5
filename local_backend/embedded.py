"""The embedded default model: a random-weight Llama-style model that needs no download.

Its text is meaningless (the weights are random); its token counts, KV cache
behaviour and timings are real, which is all a cache-hit check needs. Shape
(design doc ``local-backend.md``, "Models"): context 16,384 tokens, the
cl100k_base vocabulary plus ``<|im_start|>`` / ``<|im_end|>`` (100,266 ids),
8 layers of width 512 (8 query heads, 2 KV heads, head dim 64, MLP 1,536),
tied input/output embeddings; about 75 M parameters and 8 KiB of fp32 KV per
token (K and V x 8 layers x 2 KV heads x 64 x 4 bytes). Sized so a
2,000-token prefill takes about 1 s on a 2-core CPU.

The weights come from transformers' own initialisation under a fixed seed, so
every process builds the same model (and the same model fingerprint).
"""

from __future__ import annotations

import functools

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from promptcache.tokens.chatml import IM_END_ID

EMBEDDED_MODEL_NAME = "promptcache-embedded"
"""The name the engine (and the server's ``/v1/models``) reports for the embedded model."""

EMBEDDED_SEED = 20_240_611
EMBEDDED_CONTEXT = 16_384
EMBEDDED_VOCAB = 100_266

EMBEDDED_NOTICE = (
    "embedded default model: random weights, so its text is meaningless; "
    "token counts, KV cache behaviour and timings are real"
)


def embedded_config() -> LlamaConfig:
    """The ``LlamaConfig`` of the embedded model (SDPA attention)."""
    config = LlamaConfig(
        vocab_size=EMBEDDED_VOCAB,
        hidden_size=512,
        intermediate_size=1536,
        num_hidden_layers=8,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=EMBEDDED_CONTEXT,
        rope_theta=500_000.0,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=IM_END_ID,
        pad_token_id=None,
    )
    config._attn_implementation = "sdpa"
    return config


@functools.lru_cache(maxsize=4)
def build_embedded_model(device: str = "cpu", dtype: torch.dtype = torch.float32) -> LlamaForCausalLM:
    """Build (once per process, device and dtype) the seeded random model, in eval mode.

    Takes about 3 s on a 2-core CPU; the global torch RNG state is left untouched.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(EMBEDDED_SEED)
        model = LlamaForCausalLM(embedded_config())
    return model.to(device=device, dtype=dtype).eval()
