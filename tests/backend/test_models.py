"""The embedded default model, a local model directory, the tokenizer interface and the request-level API."""

from __future__ import annotations

import inspect
import re
import warnings

import pytest
import torch
import transformers
from backend_support import VOCAB, cpu_engine, random_tokens, save_tiny_model_dir, tiny_llama, tiny_qwen2
from packaging.version import Version

from local_backend import LocalEngine, ModelLoadError, ModelNotFoundError, SamplingParams
from local_backend.embedded import EMBEDDED_MODEL_NAME, EMBEDDED_NOTICE
from local_backend.hashing import block_hashes_for, root_extra_keys
from local_backend.models import load_errors_as, model_fingerprint
from local_backend.tokenizer import ChatMLTokenizer
from promptcache.tokens.chatml import IM_END_ID, IM_START_ID, encode_chatml

SYSTEM = {"role": "system", "content": "You are a careful assistant. " * 40}


@pytest.fixture(scope="module")
def embedded():
    return cpu_engine(kv_cache_mb=64)


def test_the_embedded_model_and_its_chatml_tokenizer(embedded):
    tok = embedded.tokenizer
    assert (tok.name, tok.vocab_size, tok.eos_token_ids) == ("cl100k_chatml", 100_266, (IM_END_ID,))
    assert embedded.model_name == EMBEDDED_MODEL_NAME and "meaningless" in EMBEDDED_NOTICE
    stats = embedded.stats()["model"]
    assert (stats["embedded"], stats["max_model_len"], stats["vocab_size"], stats["dtype"]) == (
        True, 8192, 100_266, "float32")  # 64 MiB of 8 KiB/token KV caps the context at 8,192 tokens
    messages = [SYSTEM, {"role": "user", "content": "hello"}]
    ids = tok.apply_chat_template(messages)
    assert ids == encode_chatml(messages) and ids[0] == IM_START_ID
    assert tok.decode(tok.encode("plain text, <|im_end|> stays text")) == "plain text, <|im_end|> stays text"


def test_the_embedded_model_caches_a_shared_system_prompt(embedded):
    tok = embedded.tokenizer
    first = tok.apply_chat_template([SYSTEM, {"role": "user", "content": "What is a KV cache?"}])
    second = tok.apply_chat_template([SYSTEM, {"role": "user", "content": "Why do prompts miss?"}])
    common = next(i for i, (a, b) in enumerate(zip(first, second)) if a != b)
    outs = embedded.generate([first, second], SamplingParams(max_tokens=3, temperature=0.0, ignore_eos=True))
    assert outs[0].num_cached_tokens == 0
    assert outs[1].num_cached_tokens == common // 16 * 16 > 0  # the second waited for the first's prefix
    assert isinstance(outs[1].outputs[0].text, str) and outs[1].metrics.ttft > 0
    (text,) = embedded.generate("A plain text prompt", SamplingParams(max_tokens=2))
    assert text.prompt == "A plain text prompt" and text.prompt_token_ids == tok.encode("A plain text prompt")


def test_different_models_get_different_fingerprints_and_never_share_blocks():
    prints = {model_fingerprint(tiny_llama(0), "m"), model_fingerprint(tiny_llama(1), "m"),
              model_fingerprint(tiny_qwen2(0), "m"), model_fingerprint(tiny_llama(0), "other-name")}
    assert len(prints) == 4
    assert model_fingerprint(tiny_llama(0), "m") == model_fingerprint(tiny_llama(0), "m")
    tokens = random_tokens(32, seed=1)
    hashes = [block_hashes_for(tokens, 16, root_extra_keys(fp)) for fp in prints]
    assert len({h[0] for h in hashes}) == 4 and len({h[1] for h in hashes}) == 4


def test_a_local_model_directory_loads_with_its_own_tokenizer_and_chat_template(tmp_path):
    save_tiny_model_dir(tmp_path)
    engine = cpu_engine(str(tmp_path), num_blocks=64)
    tok = engine.tokenizer
    assert tok.name == str(tmp_path) and tok.vocab_size == VOCAB and 2 in tok.eos_token_ids
    assert tok.encode("w1 w2") == [6, 7]
    ids = tok.apply_chat_template([{"role": "user", "content": "w3 w4"}])
    assert ids == [3, 8, 9, 2, 4]
    assert tok.decode([8, 9, 2]) == "w3 w4"  # special tokens skipped
    outs = engine.generate([ids, ids], SamplingParams(max_tokens=2, temperature=0.0, ignore_eos=True))
    assert outs[1].num_cached_tokens == 0  # 5 tokens: no full block
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cpu_engine(str(tmp_path / "missing"))


def test_a_path_that_is_not_a_model_folder_is_refused_before_loading(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist") as missing:
        cpu_engine(str(tmp_path / "missing"))
    assert isinstance(missing.value, FileNotFoundError) and isinstance(missing.value, ModelLoadError)
    (tmp_path / "config.json").write_text("[1, 2]")  # JSON, but no model_type
    with pytest.raises(ModelLoadError, match=r"is not a transformers model folder \(no config.json with model_type\)"):
        cpu_engine(str(tmp_path))
    with pytest.raises(ModelLoadError, match="is a file, not a model folder"):
        cpu_engine(str(tmp_path / "config.json"))
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelLoadError, match=re.escape(f"cannot load the tokenizer in {tmp_path} (pass --tokenizer "
                                                       "chatml or --tokenizer PATH to use another): KeyError: "
                                                       "'added_tokens'")):
        cpu_engine(str(tmp_path))  # the tokenizer loads first: no weights were needed to refuse it
    (tmp_path / "config.json").write_text('{"model_type": "llama", "vocab_size": 100266}')  # room for ChatML's ids
    with pytest.raises(ModelLoadError, match=f"cannot load the model in {tmp_path}: OSError: .*model.safetensors"):
        cpu_engine(str(tmp_path), tokenizer=ChatMLTokenizer())  # transformers' own error, named as a load error


@pytest.mark.parametrize("error", [RuntimeError("sizes differ"), KeyError("added_tokens"), ImportError("no spm")])
def test_any_failure_of_a_loader_becomes_a_model_load_error_naming_its_type(error):
    with pytest.raises(ModelLoadError) as caught, load_errors_as("cannot load the model in DIR"):
        raise error
    assert str(caught.value) == f"cannot load the model in DIR: {type(error).__name__}: {error}"
    assert caught.value.__cause__ is error


@pytest.mark.parametrize("error", [MemoryError(), KeyboardInterrupt(), SystemExit(1)])
def test_running_out_of_memory_and_interrupts_pass_through_a_loader_unwrapped(error):
    with pytest.raises(type(error)) as caught, load_errors_as("cannot load the model in DIR"):
        raise error
    assert caught.value is error


def test_the_request_level_api_streams_step_outputs(llama_model):
    engine = cpu_engine(llama_model, num_blocks=64)
    shared = random_tokens(40, seed=2)
    engine.add_request("a", shared + [1, 2], SamplingParams(max_tokens=3, temperature=0.0, ignore_eos=True))
    engine.add_request("b", shared + [3], SamplingParams(max_tokens=2, temperature=0.0, ignore_eos=True))
    seen: dict[str, list] = {"a": [], "b": []}
    while engine.has_unfinished_requests():
        for delta in engine.step():
            seen[delta.request_id].append(delta)
    assert [len(d.new_token_ids) for d in seen["a"]] == [1, 1, 1]
    assert [d.finished for d in seen["b"]] == [False, True] and seen["b"][-1].finish_reason == "length"
    assert seen["b"][0].num_cached_tokens == 32 and seen["a"][0].num_cached_tokens == 0
    assert all(d.ttft is not None and d.ttft > 0 for d in seen["a"] + seen["b"])
    assert seen["a"][0].prompt_tokens == 42
    assert engine.step() == []


def test_a_model_object_runs_where_it_is_unless_told_and_is_moved_in_place_when_told():
    model = tiny_llama(4).to(torch.bfloat16)
    engine = LocalEngine(model, num_blocks=8)  # no device / dtype: the model's own (CPU, bf16), not the defaults
    assert next(model.parameters()).dtype == torch.bfloat16
    assert engine.stats()["model"]["dtype"] == "bfloat16" and engine.store.key_cache[0].dtype == torch.bfloat16
    (out,) = engine.generate([random_tokens(20, seed=5)], SamplingParams(max_tokens=2, temperature=0.0))
    assert len(out.outputs[0].token_ids) == 2
    moved = LocalEngine(model, num_blocks=8, device="cpu", dtype="float32")  # asked for: the engine takes it over
    assert moved.runner.model is model and next(model.parameters()).dtype == torch.float32


def test_the_runner_passes_the_cache_under_the_keyword_the_installed_transformers_names(llama_model):
    forward = inspect.signature(type(llama_model).forward).parameters
    engine = cpu_engine(llama_model, num_blocks=8)
    assert engine.runner.cache_keyword in forward  # a named parameter of forward, not a deprecation shim
    if Version(transformers.__version__) >= Version("5.24"):  # `cache=`; `past_key_values=` is deprecated
        assert engine.runner.cache_keyword == "cache"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # transformers warns (FutureWarning) on a deprecated keyword
        (out,) = engine.generate([random_tokens(20, seed=6)], SamplingParams(max_tokens=2, temperature=0.0))
    assert len(out.outputs[0].token_ids) == 2
