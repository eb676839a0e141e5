"""Builders shared by the engine tests: tiny random models (no download), engines pinned to a device
and dtype, token ids, bare requests.

A uniquely named module (not ``conftest``/``helpers``), so test files import it
unambiguously whichever test folders pytest puts on ``sys.path``.

Every engine a test builds goes through :func:`cpu_engine` (CPU, fp32) or a
:class:`Numerics` (the correctness tests' device/dtype variants), never a bare
``LocalEngine(model)``: the engine's defaults pick CUDA and bf16 where a GPU
exists, and the exact figures of these tests are fp32 figures.
"""

from __future__ import annotations

import copy
import os
import random
from dataclasses import dataclass
from typing import Any

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from local_backend import LocalEngine
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

TINY_CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} </s> {% endfor %}"
                      "{% if add_generation_prompt %}<|assistant|> {% endif %}")


def tiny_tokenizer(added_tokens: tuple[str, ...] = (), eos_token: str = "</s>", pad_token: str | None = None) -> Any:
    """A word-level ``PreTrainedTokenizerFast`` with :data:`VOCAB` ids and a chat template (no download).

    Ids: ``<unk>`` 0, ``<s>`` 1 (bos), ``</s>`` 2 (eos), ``<|user|>`` 3, ``<|assistant|>`` 4, ``w0``..``w506``
    5..511; text is split on whitespace, no BOS is added. The template renders ``<|role|> content </s>`` per
    message, then ``<|assistant|>``. ``added_tokens`` (and ``pad_token`` when not among them) get ids ``VOCAB``,
    ``VOCAB + 1``...: past a tiny model's embedding; ``eos_token`` may name one of them.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>"] + [f"w{i}" for i in range(VOCAB - 5)]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                        unk_token="<unk>", chat_template=TINY_CHAT_TEMPLATE)
    tokenizer.add_tokens(list(added_tokens))
    if pad_token is not None:
        tokenizer.add_special_tokens({"pad_token": pad_token})
    tokenizer.eos_token = eos_token
    return tokenizer


def save_tiny_model_dir(path: Any, arch: str = "llama", added_tokens: tuple[str, ...] = (),
                        eos_token: str = "</s>") -> None:
    """Save a tiny model folder (``save_pretrained``): ``MODELS[arch](3)`` with eos id 2 and a
    :func:`tiny_tokenizer` (``added_tokens`` and ``eos_token`` passed on)."""
    tiny_tokenizer(added_tokens, eos_token).save_pretrained(path)
    model = MODELS[arch](3)
    model.config.eos_token_id = 2
    model.save_pretrained(path)


CPU_FP32: dict[str, Any] = {"device": "cpu", "dtype": torch.float32}


def cpu_engine(model: Any = None, **options: Any) -> LocalEngine:
    """``LocalEngine(model, **options)`` on the CPU in fp32, whatever accelerator the machine has.

    Raises:
        AssertionError: ``model`` is not an fp32 CPU model (a shared fixture was changed by someone).
    """
    if isinstance(model, torch.nn.Module):
        param = next(model.parameters())
        assert (param.device.type, param.dtype) == ("cpu", torch.float32), f"{param.device} {param.dtype}"
    return LocalEngine(model, **{**CPU_FP32, **options})


@dataclass(frozen=True)
class Numerics:
    """A device and dtype the numerical correctness tests run on, with the tolerances that go with it.

    Attributes:
        name: the test id (``cpu-fp32``, ``cpu-bf16``, ``cuda-bf16``).
        device / dtype: where the model and the KV pool live.
        atol: logits of the engine vs the model's own forward, absolute (logit units).
        margin: greedy tokens are compared while the reference's top-2 logit margin exceeds this.
        min_compared: greedy steps that must be compared before the first near-tie (out of 32).
    """

    name: str
    device: str
    dtype: torch.dtype
    atol: float
    margin: float
    min_compared: int

    @property
    def exact(self) -> bool:
        """fp32: two orders of the same sums agree to 1e-4, so token sequences must match exactly."""
        return self.dtype == torch.float32

    def available(self) -> bool:
        return self.device == "cpu" or (self.device == "cuda" and torch.cuda.is_available())

    def place(self, model: Any) -> Any:
        """``model`` itself for CPU fp32, else a copy moved to this device and dtype (the original stays fp32)."""
        if (self.device, self.dtype) == ("cpu", torch.float32):
            return model
        return copy.deepcopy(model).to(device=self.device, dtype=self.dtype)

    def engine(self, model: Any, **options: Any) -> LocalEngine:
        """An engine on this device and dtype."""
        return LocalEngine(model, device=self.device, dtype=self.dtype, **options)

    def tensor(self, tokens: list[int]) -> torch.Tensor:
        """``[1, len(tokens)]`` input ids on this device."""
        return torch.tensor([tokens], device=self.device)


NUMERICS = {
    # the figures: fp32, atol 1e-4, greedy compared wherever the top-2 margin exceeds 1e-4
    "cpu-fp32": Numerics("cpu-fp32", "cpu", torch.float32, atol=1e-4, margin=1e-4, min_compared=16),
    # bf16 keeps 8 significant bits: these models' logits (|logit| up to ~16) come in steps of 1/16 to 1/8,
    # so top-2 ties are common and a greedy run may hit one at its first step (min_compared 0). atol is
    # 4-8 steps of kernel-order rounding; the margin leaves 2 * atol for both sides to move. On the CPU
    # (cpu-bf16) the engine's logits equal the model's exactly; CUDA kernels round differently.
    "cpu-bf16": Numerics("cpu-bf16", "cpu", torch.bfloat16, atol=0.5, margin=1.0, min_compared=0),
    "cuda-bf16": Numerics("cuda-bf16", "cuda", torch.bfloat16, atol=0.5, margin=1.0, min_compared=0),
}
NUMERICS_ENV = "PROMPTCACHE_TEST_NUMERICS"
"""Comma-separated :data:`NUMERICS` names the correctness tests run on (default ``cpu-fp32,cuda-bf16``;
``cuda-bf16`` is skipped where CUDA is missing)."""


def selected_numerics() -> list[str]:
    """The :data:`NUMERICS` names chosen by :data:`NUMERICS_ENV`.

    Raises:
        ValueError: an unknown name in the variable.
    """
    names = [n.strip() for n in os.environ.get(NUMERICS_ENV, "cpu-fp32,cuda-bf16").split(",") if n.strip()]
    unknown = sorted(set(names) - set(NUMERICS))
    if unknown:
        raise ValueError(f"{NUMERICS_ENV}: unknown {unknown}; choose from {', '.join(NUMERICS)}")
    return names


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
