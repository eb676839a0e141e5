"""Export the embedded default model (``local_backend.embedded``: seeded random Llama, cl100k + ChatML tokenizer)
to GGUF for llama.cpp's ``llama-server``, with the same token ids as the embedded tokenizer.

Usage: ``python tests/engines/export_gguf.py OUT.gguf`` (about 1 minute on 2 cores; written once, reused by
``make test-engines``). Needs the ``gguf`` package (``pip install 'promptcache[llama]'``).

* Tokenizer: GGUF ``gpt2`` (byte-level BPE) with pre-tokenizer ``llama-bpe``, whose split regex is cl100k's
  (llama.cpp ``src/llama-vocab.cpp``, ``LLAMA_VOCAB_PRE_TYPE_LLAMA3``, with ``ignore_merges`` as tiktoken does);
  tokens 0..100255 are cl100k's ranks in GPT-2's byte-to-unicode spelling, the merges are recovered from the
  ranks (each token is the merge of the two parts BPE reaches with lower ranks: the method of llama.cpp's
  ``convert_hf_to_gguf.py`` for tiktoken vocabularies); ``<|im_start|>`` 100264 and ``<|im_end|>`` 100265 are
  control tokens (end of generation: 100265); the other ids below 100266 are unused, so they are never produced
  (the embedded tokenizer never produces them either). No BOS is added.
* Chat template: ``chatml_tools.jinja`` beside this file (renders tools as ``encode_chatml`` does).
* Weights: the embedded model's, F16 for matrices and F32 for norms, Q/K rows permuted for llama.cpp's RoPE
  layout (``convert_hf_to_gguf.py`` ``LlamaModel.permute``); tied output embedding (no ``output.weight``).
"""

from __future__ import annotations

import sys
from pathlib import Path

TEMPLATE = Path(__file__).with_name("chatml_tools.jinja")


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (the spelling of byte-level BPE vocabularies)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars)))


def _split(ranks: dict[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """``token``'s parts after every BPE merge of rank below ``max_rank`` (two parts for a mergeable token)."""
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < max_rank and (best is None or rank < best[1]):
                best = (i, rank)
        if best is None:
            return parts
        i = best[0]
        parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2:]


def vocabulary() -> tuple[list[str], list[int], list[str]]:
    """``(tokens, token types, merges)`` of the embedded tokenizer for GGUF (100,266 ids)."""
    import gguf

    from local_backend.embedded import EMBEDDED_VOCAB
    from promptcache.tokens.chatml import IM_END, IM_END_ID, IM_START, IM_START_ID, chatml_encoding

    ranks = chatml_encoding()._mergeable_ranks
    spell = byte_to_unicode()
    tokens = [f"[PAD{i}]" for i in range(EMBEDDED_VOCAB)]
    types = [gguf.TokenType.UNUSED] * EMBEDDED_VOCAB
    merges = []
    for token, rank in ranks.items():
        tokens[rank] = "".join(spell[b] for b in token)
        types[rank] = gguf.TokenType.NORMAL
        if len(token) > 1:
            left, right = _split(ranks, token, rank)
            merges.append("".join(spell[b] for b in left) + " " + "".join(spell[b] for b in right))
    for text, token_id in ((IM_START, IM_START_ID), (IM_END, IM_END_ID)):
        tokens[token_id], types[token_id] = text, gguf.TokenType.CONTROL
    return tokens, [int(t) for t in types], merges


def permute(weight, n_head: int):
    """HF's rotary layout (halves) -> llama.cpp's (interleaved pairs), per head."""
    return weight.reshape(n_head, 2, weight.shape[0] // n_head // 2, *weight.shape[1:]).swapaxes(1, 2) \
        .reshape(weight.shape)


def export(out: Path) -> Path:
    """Write the embedded model to ``out`` (GGUF); returns ``out``."""
    import gguf
    import numpy as np

    from local_backend.embedded import EMBEDDED_CONTEXT, EMBEDDED_MODEL_NAME, build_embedded_model
    from promptcache.tokens.chatml import IM_END_ID

    model = build_embedded_model()
    config = model.config
    head_dim = config.hidden_size // config.num_attention_heads
    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name(EMBEDDED_MODEL_NAME)
    writer.add_context_length(EMBEDDED_CONTEXT)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    rope = (getattr(config, "rope_parameters", None) or {}).get("rope_theta")  # transformers 5; 4.x: rope_theta
    writer.add_rope_freq_base(float(rope if rope is not None else config.rope_theta))
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(float(config.rms_norm_eps))
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, types, merges = vocabulary()
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(IM_END_ID)
    writer.add_eot_token_id(IM_END_ID)
    writer.add_add_bos_token(False)
    writer.add_chat_template(TEMPLATE.read_text())
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    per_layer = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q",
                 "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
                 "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight":
            continue  # tied to token_embd
        data = tensor.detach().float().numpy()
        if name.startswith("model.layers."):
            layer, rest = name[len("model.layers."):].split(".", 1)
            part = rest.rsplit(".", 1)[0]
            if part == "self_attn.q_proj":
                data = permute(data, config.num_attention_heads)
            elif part == "self_attn.k_proj":
                data = permute(data, config.num_key_value_heads)
            target = f"blk.{layer}.{per_layer[part]}.weight"
        else:
            target = names[name]
        writer.add_tensor(target, data.astype(np.float16) if data.ndim == 2 else data.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/engines/export_gguf.py OUT.gguf")
    print(f"wrote {export(Path(sys.argv[1]))}")
