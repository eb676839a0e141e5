"""Builders shared by the verify tests: a tiny random model with the embedded model's vocabulary and the
README's local-reuse figures.

A uniquely named module (not ``conftest``/``helpers``) so test files import it
unambiguously whichever test folders pytest puts on ``sys.path``.

Why a tiny model: a trace's cache hits depend only on the token ids (the
tokenizer and the chat template) and the block size, never on the weights.
The tiny model has the embedded model's vocabulary (cl100k + ChatML, 100,266
ids) and is served with the same ChatML tokenizer, so every count equals the
embedded model's, while a 6,000-token prefill costs well under a second
instead of several (design doc: "its token counts, KV cache behaviour and
timings are real"; only the timings differ).
"""

from __future__ import annotations

import re
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from local_backend import LocalEngine
from local_backend.embedded import EMBEDDED_CONTEXT, EMBEDDED_VOCAB
from local_backend.tokenizer import ChatMLTokenizer
from promptcache.tokens.chatml import IM_END_ID


def tiny_chatml_model(seed: int = 0) -> LlamaForCausalLM:
    """1 layer, width 16, one attention head; the embedded model's vocabulary and context; random weights, seeded."""
    config = LlamaConfig(vocab_size=EMBEDDED_VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=EMBEDDED_CONTEXT,
                         tie_word_embeddings=True, bos_token_id=None, eos_token_id=IM_END_ID, pad_token_id=None)
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LlamaForCausalLM(config).eval()


def tiny_engine(model: LlamaForCausalLM, **options) -> LocalEngine:
    """An engine over ``model`` with the embedded ChatML tokenizer; an ample pool unless ``options`` say otherwise."""
    options.setdefault("num_blocks", 16_384)
    return LocalEngine(model, tokenizer=ChatMLTokenizer(), **options)


def readme_local_reuse(readme: Path) -> dict[str, float]:
    """``{trace file: local reuse}`` from the traces README's summary table (the first figure where two are
    given: "tools first", the order of the ChatML template)."""
    lines = readme.read_text().splitlines()
    header = next(line for line in lines if line.startswith("| file |"))
    column = [cell.strip() for cell in header.strip("|").split("|")].index("local reuse³")
    out = {}
    for line in lines:
        match = re.match(r"\| `([a-z_]+\.jsonl)` \|", line)
        if match:
            cell = [c.strip() for c in line.strip("|").split("|")][column]
            out[match.group(1)] = float(re.match(r"([\d.]+)%", cell).group(1)) / 100
    return out
