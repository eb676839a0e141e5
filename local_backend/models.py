"""Loading the model the engine runs: the embedded default, a local directory, or a model object.

The model is an ordinary transformers causal LM run unmodified (SDPA
attention); only :mod:`local_backend.paged_cache` knows about blocks.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from local_backend.embedded import EMBEDDED_MODEL_NAME, EMBEDDED_SEED, build_embedded_model
from local_backend.errors import ModelLoadError, VocabularyWarning
from local_backend.model_folder import TOKENIZER_FILES, check_model_folder, model_path  # noqa: F401 (TOKENIZER_FILES: re-exported)
from local_backend.tokenizer import ChatMLTokenizer, EngineTokenizer, HFTokenizer

_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
           "float16": torch.float16, "fp16": torch.float16}


@dataclass
class LoadedModel:
    """A model ready to run, with what the engine needs to know about it.

    ``num_layers``, ``num_kv_heads`` and ``head_dim`` size the KV store;
    ``max_context`` is the model's context length in tokens (capped by a
    sliding window if the model has one, so full attention stays exact).
    """

    model: Any
    tokenizer: EngineTokenizer | None
    name: str
    fingerprint: str
    device: torch.device
    dtype: torch.dtype
    vocab_size: int
    num_layers: int
    num_kv_heads: int
    head_dim: int
    max_context: int
    is_embedded: bool = False


def pick_device(device: str | None) -> torch.device:
    """``device`` if given, else CUDA, then MPS, then CPU."""
    if device:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(device: torch.device, dtype: str | torch.dtype | None) -> torch.dtype:
    """``dtype`` if given, else fp32 on CPU, bf16 on CUDA, fp16 on MPS.

    Raises:
        ValueError: an unknown dtype name.
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype:
        try:
            return _DTYPES[dtype.lower()]
        except KeyError:
            raise ValueError(f"unknown dtype {dtype!r}; use one of {', '.join(_DTYPES)}") from None
    return {"cuda": torch.bfloat16, "mps": torch.float16}.get(device.type, torch.float32)


def model_fingerprint(model: Any, name: str) -> str:
    """A hex digest that differs between models: config, name and a sample of every weight.

    Mixed into ``extra_0`` of every block hash so that caches never cross models.
    """
    digest = hashlib.sha256(name.encode())
    digest.update(json.dumps(model.config.to_dict(), sort_keys=True, default=str).encode())
    with torch.no_grad():
        for param_name, param in model.named_parameters():
            sample = param.detach().reshape(-1)[:16].to("cpu", torch.float32)
            digest.update(param_name.encode() + str(tuple(param.shape)).encode() + sample.numpy().tobytes())
    return digest.hexdigest()[:32]


def _ids_in_use(tokenizer: EngineTokenizer) -> dict[int, str]:
    """Token ids every request will hold or the engine will look for, each with what uses it.

    The bos / eos tokens of a transformers tokenizer (``encode`` adds the BOS to completion prompts), the
    engine's end-of-sequence ids and the ids of a chat of one empty user message rendered with the tokenizer's
    chat template (its turn markers and role names; none without a template). Not the pad token: the engine
    never pads (Llama-2's tokenizer adds ``<pad>`` as id 32,000 to a 32,000-row model, transformers#24899).
    """
    used: dict[int, str] = {}
    hf = getattr(tokenizer, "hf_tokenizer", None)
    for role in ("bos", "eos"):
        token_id = getattr(hf, f"{role}_token_id", None) if hf is not None else None
        if isinstance(token_id, int):
            used.setdefault(token_id, f"{role} token")
    for token_id in tokenizer.eos_token_ids:
        used.setdefault(int(token_id), "eos token")
    try:
        rendered = tokenizer.apply_chat_template([{"role": "user", "content": ""}])
    except Exception:  # no chat template, or one that needs more than one user message: nothing to learn from it
        rendered = []
    for token_id in rendered:
        used.setdefault(int(token_id), "chat template")
    return used


def _tokenizer_ids(tokenizer: EngineTokenizer) -> Iterable[int]:
    hf = getattr(tokenizer, "hf_tokenizer", None)
    return hf.get_vocab().values() if hf is not None else range(tokenizer.vocab_size)


def check_vocabularies(tokenizer: EngineTokenizer, embedding_rows: int, model_name: str, advice: str,
                       warn: bool = True) -> None:
    """Refuse a tokenizer whose always-used ids reach past the model's input embedding; warn about the others.

    Tokenizers often hold more ids than the model embeds (added tokens nobody trained: Gemma 3 1B's tokenizer
    has 262,145 ids for 262,144 rows; vLLM loads such models, vllm-project/vllm#33509). Only ids every request
    uses are checked at load (:func:`_ids_in_use`: bos / eos, the chat template's markers); a prompt
    holding any other id past the embedding is refused per request (``OutOfVocabularyError``, a 400 naming
    the id).

    Args:
        tokenizer: the engine's tokenizer (its ``vocab_size`` is its largest id + 1).
        embedding_rows: rows of the model's input embedding (``get_input_embeddings().weight.shape[0]``, or
            before the weights load, the config's ``vocab_size``).
        model_name: named in the messages.
        advice: what to do, ending the error (e.g. "Use the model's own tokenizer (omit --tokenizer) ...").
        warn: issue the warning about unused ids past the embedding (once per load: the check before the
            weights load passes False).

    Warns:
        VocabularyWarning: the tokenizer has ids at or past ``embedding_rows`` that no request needs; names
            how many.

    Raises:
        ModelLoadError: an id of :func:`_ids_in_use` is at or past ``embedding_rows``: every request would be
            refused.
    """
    if tokenizer.vocab_size <= embedding_rows:
        return
    hf = getattr(tokenizer, "hf_tokenizer", None)
    label = (getattr(hf, "name_or_path", None) or type(hf).__name__) if hf is not None else tokenizer.name
    outside = sorted((i, what) for i, what in _ids_in_use(tokenizer).items() if not 0 <= i < embedding_rows)
    if outside:
        shown = ", ".join(f"{i} ({what})" for i, what in outside[:6])
        more = f" and {len(outside) - 6} more" if len(outside) > 6 else ""
        raise ModelLoadError(
            f"the tokenizer {label} uses token ids past the {embedding_rows:,} embedding rows of the model "
            f"{model_name} (ids 0-{embedding_rows - 1:,}) in every request: {shown}{more}; every request would "
            f"be refused. {advice}")
    if warn:
        past = sum(1 for i in _tokenizer_ids(tokenizer) if i >= embedding_rows)
        warnings.warn(
            f"the tokenizer {label} has {past:,} token id{'s' if past != 1 else ''} past the {embedding_rows:,} "
            f"embedding rows of the model {model_name} (added tokens the model has no embedding for); the ids "
            "every request uses (bos / eos, chat template) are within them, so the model is served, and a prompt "
            "holding such an id is refused", VocabularyWarning, stacklevel=3)


@contextmanager
def load_errors_as(message: str) -> Iterator[None]:
    """Turn any failure of transformers' loaders (``from_pretrained``) in the block into a :class:`ModelLoadError`.

    ``from_pretrained`` is a third-party boundary that raises whatever its parsers
    raise on a broken folder: ``OSError`` (missing weights), ``SafetensorError``
    (a corrupt ``model.safetensors``), ``RuntimeError`` (a ``config.json`` whose
    sizes do not match the weights), ``KeyError`` (a ``tokenizer.json`` that is
    not one), ``ImportError`` (a package the tokenizer needs). Each becomes
    ``ModelLoadError("{message}: {type}: {error}")``. ``MemoryError``,
    ``KeyboardInterrupt`` and ``SystemExit`` pass through unchanged.

    Args:
        message: names the folder and what could not be loaded from it.

    Raises:
        ModelLoadError: the block raised any other ``Exception``.
    """
    try:
        yield
    except (MemoryError, ModelLoadError):
        raise
    except Exception as exc:  # a third-party loader: its failures are not ours to enumerate
        raise ModelLoadError(f"{message}: {type(exc).__name__}: {exc}") from exc


def _text_config(config: Any) -> Any:
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def _geometry(config: Any) -> tuple[int, int, int, int]:
    cfg = _text_config(config)
    heads = cfg.num_attention_heads
    kv_heads = getattr(cfg, "num_key_value_heads", None) or heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads
    context = getattr(cfg, "max_position_embeddings", None) or 2048
    layer_types = getattr(cfg, "layer_types", None) or []
    if any(t != "full_attention" for t in layer_types) or getattr(cfg, "use_sliding_window", False):
        window = getattr(cfg, "sliding_window", None)
        if not window:
            raise ValueError(f"{type(config).__name__}: only full-attention decoder models are supported")
        context = min(context, int(window))  # within the window, sliding attention equals full attention
    return cfg.num_hidden_layers, kv_heads, head_dim, int(context)


def load_model(
    model: str | Path | Any | None,
    tokenizer: EngineTokenizer | Any | None = None,
    device: str | None = None,
    dtype: str | torch.dtype | None = None,
) -> LoadedModel:
    """Load what ``LocalEngine(model=...)`` names.

    Args:
        model: None for the embedded default; a local directory of a
            transformers causal LM (Llama, Qwen2/3, Mistral...) loaded with
            ``from_pretrained``; or a ``PreTrainedModel`` object (tests build
            tiny random ones from a config).
        tokenizer: an :class:`EngineTokenizer` or a transformers tokenizer;
            default: the ChatML tokenizer (embedded), the directory's tokenizer
            (path), none (model object: prompts must be token ids).
        device, dtype: see :func:`pick_device` / :func:`pick_dtype` for the
            embedded model and directories. A model object runs on its own
            device and in its own dtype unless these are given.

    A model object is used in place, not copied (a copy would double the
    memory of a real model): the engine takes it over. It is put in eval
    mode, switched to SDPA attention if it uses another implementation, and,
    only when ``device`` / ``dtype`` are given and differ from its own, moved
    with ``model.to(device, dtype)``, which changes the caller's object (as
    ``torch.nn.Module.to`` and transformers' ``pipeline(model=..., device=...)``
    do). Pass a copy to keep the original as it was.

    Raises:
        ModelNotFoundError: ``model`` is a path that does not exist (also a ``FileNotFoundError``).
        ModelLoadError: ``model`` is a path but not a transformers model folder (see
            :func:`check_model_folder`), holds no tokenizer while none is given, or ``from_pretrained``
            fails on it in any way (corrupt weights, a config that does not match them, a broken
            tokenizer; see :func:`load_errors_as`). A ``ValueError``; checked before any weight is read
            where possible.
        ModelLoadError: an id of the tokenizer that every request uses (bos / eos, the chat template's
            markers) is past the model's embedding rows (see :func:`check_vocabularies`).

    Warns:
        VocabularyWarning: the tokenizer has other ids past the embedding (unused added tokens); a prompt
            holding one is refused per request.
        ValueError: the model is not a full-attention causal LM, or a bad dtype.
    """
    if model is not None and not isinstance(model, (str, Path)):
        own = next(model.parameters())
        device = device or own.device
        dtype = dtype or own.dtype
    dev = pick_device(device)
    dt = pick_dtype(dev, dtype)
    is_embedded = False
    if tokenizer is None:
        advice = ("The folder's tokenizer does not match its weights: pass --tokenizer PATH with the model's "
                  "vocabulary")
    elif model is None or isinstance(model, (str, Path)):
        advice = "Use the model's own tokenizer (omit --tokenizer) or one with the model's vocabulary"
    else:
        advice = "Pass a tokenizer with the model's vocabulary"
    if model is None:
        hf_model = build_embedded_model(str(dev), dt)
        name = EMBEDDED_MODEL_NAME
        tok = tokenizer or ChatMLTokenizer()
        fingerprint = hashlib.sha256(f"{name}:{EMBEDDED_SEED}:{dt}".encode()).hexdigest()[:32]
        is_embedded = True
    elif isinstance(model, (str, Path)):
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        path = model_path(model)
        check_model_folder(path, needs_tokenizer=tokenizer is None, spec=str(model))
        name = str(model)
        if tokenizer is None:  # the tokenizer first: it is cheap, and a broken one fails before the weights load
            with load_errors_as(f"cannot load the tokenizer in {path} (pass --tokenizer chatml or --tokenizer PATH "
                                "to use another)"):
                hf_tokenizer = AutoTokenizer.from_pretrained(path)
        with load_errors_as(f"cannot load the model in {path}"):
            rows = getattr(_text_config(AutoConfig.from_pretrained(path)), "vocab_size", None)
        if rows:  # before the weights are read; checked again (and warned about) against the embedding below
            early = tokenizer if tokenizer is not None else hf_tokenizer
            check_vocabularies(early if isinstance(early, EngineTokenizer) else HFTokenizer(early, name), int(rows),
                               name, advice, warn=False)
        with load_errors_as(f"cannot load the model in {path}"):
            hf_model = AutoModelForCausalLM.from_pretrained(path, dtype=dt, attn_implementation="sdpa")
        if tokenizer is None:
            gen_eos = getattr(getattr(hf_model, "generation_config", None), "eos_token_id", None)
            extra = gen_eos if isinstance(gen_eos, list) else ([gen_eos] if gen_eos is not None else [])
            tok = HFTokenizer(hf_tokenizer, name, extra)
        else:
            tok = tokenizer
        hf_model = hf_model.to(dev).eval()
        fingerprint = model_fingerprint(hf_model, name)
    else:
        own = next(model.parameters())
        if (own.device, own.dtype) != (dev, dt):
            model.to(device=dev, dtype=dt)  # asked for: moved in place (the engine owns the model now)
        hf_model = model.eval()
        name = getattr(hf_model.config, "name_or_path", "") or type(hf_model).__name__
        tok = tokenizer
        fingerprint = model_fingerprint(hf_model, name)
    if tok is not None and not isinstance(tok, EngineTokenizer):
        tok = HFTokenizer(tok, name)
    if getattr(hf_model.config, "_attn_implementation", "sdpa") != "sdpa":
        hf_model.set_attn_implementation("sdpa")
    layers, kv_heads, head_dim, context = _geometry(hf_model.config)
    vocab = hf_model.get_input_embeddings().weight.shape[0]
    if tok is not None:
        check_vocabularies(tok, vocab, name, advice)
    return LoadedModel(hf_model, tok, name, fingerprint, dev, dt, vocab, layers, kv_heads, head_dim, context,
                       is_embedded)
