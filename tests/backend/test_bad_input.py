"""Bad input gets a clear ValueError at add_request / generate time, and the engine keeps serving."""

from __future__ import annotations

import pytest
from backend_support import VOCAB, cpu_engine, random_tokens

from local_backend import (
    DuplicateRequestError,
    EmptyPromptError,
    InvalidRequestError,
    InvalidSamplingParamsError,
    LocalEngine,
    OutOfVocabularyError,
    PromptTooLongError,
    SamplingParams,
)


@pytest.fixture()
def engine(llama_model):
    return cpu_engine(llama_model, num_blocks=8, block_size=16)  # 128-token pool, 1,024-token model context


def _serves(engine: LocalEngine) -> None:
    (out,) = engine.generate([random_tokens(20, seed=1)], SamplingParams(max_tokens=2, temperature=0.0))
    assert len(out.outputs[0].token_ids) == 2


def test_a_prompt_longer_than_the_pool_is_refused_with_a_way_out(engine):
    engine.add_request("ok", random_tokens(30, seed=2), SamplingParams(max_tokens=3))
    with pytest.raises(PromptTooLongError, match=r"129 tokens is longer than the KV pool \(128 tokens\).*kv_cache_mb"):
        engine.add_request("big", random_tokens(129, seed=3))
    results = []
    while engine.has_unfinished_requests():
        results.extend(engine.step())
    assert [r.request_id for r in results if r.finished] == ["ok"]
    _serves(engine)


def test_a_prompt_longer_than_the_context_is_refused(llama_model):
    engine = cpu_engine(llama_model, num_blocks=256)
    assert engine.max_model_len == 1024
    with pytest.raises(PromptTooLongError, match="longer than the model's context"):
        engine.generate([random_tokens(1025, seed=4)])
    _serves(engine)


def test_a_request_stops_at_the_context_limit(llama_model):
    engine = cpu_engine(llama_model, num_blocks=4, block_size=16)  # max_model_len = 64 tokens
    (out,) = engine.generate([random_tokens(60, seed=5)], SamplingParams(max_tokens=50, ignore_eos=True))
    assert len(out.outputs[0].token_ids) == 4 and out.outputs[0].finish_reason == "length"


@pytest.mark.parametrize(("prompt", "error", "message"), [
    ([], EmptyPromptError, "empty"),
    ([1, 2, VOCAB], OutOfVocabularyError, f"token id {VOCAB} at position 2 is outside"),
    ([1, -1], OutOfVocabularyError, "token id -1 at position 1"),
    ([1, "2"], InvalidRequestError, "position 1 holds '2'"),
    ([1, 2.0], InvalidRequestError, "must be integers"),
    ("text", InvalidRequestError, "no tokenizer"),
    (b"bytes", InvalidRequestError, "not bytes"),
])
def test_malformed_prompts_are_rejected_and_nothing_is_queued(engine, prompt, error, message):
    with pytest.raises(error, match=message):
        engine.add_request("bad", prompt)
    assert not engine.has_unfinished_requests()
    _serves(engine)


def test_numpy_and_torch_token_ids_are_accepted(engine):
    import numpy as np
    import torch

    tokens = random_tokens(20, seed=9)
    for prompt in (np.array(tokens, dtype=np.int64), torch.tensor(tokens), [np.int32(t) for t in tokens]):
        for prompts in ([prompt], prompt):
            (out,) = engine.generate(prompts, SamplingParams(max_tokens=1))
            assert out.prompt_token_ids == tokens and all(type(t) is int for t in out.prompt_token_ids)


def test_generate_checks_every_prompt_before_queuing_any(engine):
    with pytest.raises(EmptyPromptError):
        engine.generate([random_tokens(10, seed=6), []])
    assert not engine.has_unfinished_requests()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
    ({"temperature": -0.5}, "temperature must be >= 0"),
    ({"temperature": float("nan")}, "temperature must be >= 0"),
    ({"top_p": 0.0}, r"top_p must be in \(0, 1\]"),
    ({"top_p": 1.5}, r"top_p must be in \(0, 1\]"),
    ({"top_k": -2}, "top_k must be an integer"),
    ({"seed": "x"}, "seed must be an integer"),
    ({"stop_token_ids": [1, -3]}, "stop_token_ids must be"),
    ({"max_tokens": True}, "max_tokens must be"),
])
def test_invalid_sampling_params_are_rejected(kwargs, message):
    with pytest.raises(InvalidSamplingParamsError, match=message):
        SamplingParams(**kwargs)
    assert issubclass(InvalidSamplingParamsError, ValueError)


def test_wrong_sampling_params_type_and_count(engine):
    with pytest.raises(InvalidRequestError, match="must be a SamplingParams"):
        engine.add_request("x", [1, 2], {"max_tokens": 3})
    with pytest.raises(InvalidRequestError, match="2 sampling params for 1 prompts"):
        engine.generate([[1, 2]], [SamplingParams(), SamplingParams()])


def test_duplicate_request_ids_are_refused_and_abort_frees_blocks(engine):
    engine.add_request("same", random_tokens(40, seed=7), SamplingParams(max_tokens=30))
    with pytest.raises(DuplicateRequestError):
        engine.add_request("same", [1, 2, 3])
    engine.step()
    assert engine.kv_usage().blocks_used == 3
    assert engine.abort_request("same") is True
    assert engine.abort_request("same") is False
    assert engine.kv_usage().blocks_used == 0 and not engine.has_unfinished_requests()
    assert engine.stats()["requests"]["aborted"] == 1
    _serves(engine)


def test_stop_tokens_end_a_request(llama_model):
    engine = cpu_engine(llama_model, num_blocks=64)
    prompt = random_tokens(20, seed=8)
    (free,) = engine.generate([prompt], SamplingParams(max_tokens=6, temperature=0.0))
    stop = free.outputs[0].token_ids[2]
    (stopped,) = engine.generate([prompt], SamplingParams(max_tokens=6, temperature=0.0, stop_token_ids=[stop]))
    first = free.outputs[0].token_ids.index(stop)
    assert stopped.outputs[0].token_ids == free.outputs[0].token_ids[: first + 1]
    assert (stopped.outputs[0].finish_reason, stopped.outputs[0].stop_reason) == ("stop", stop)


def test_bad_engine_options_are_rejected(llama_model):
    with pytest.raises(ValueError, match="not both"):
        cpu_engine(llama_model, num_blocks=8, kv_cache_mb=1)
    with pytest.raises(ValueError, match="unknown eviction policy"):
        cpu_engine(llama_model, eviction="random")
    with pytest.raises(ValueError, match="exceeds the model's context"):
        cpu_engine(llama_model, max_model_len=4096)
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        cpu_engine(llama_model, block_size=0)


@pytest.mark.parametrize(("option", "value"), [
    ("block_size", 1.5), ("block_size", 16.0), ("block_size", True), ("num_blocks", 10.5),
    ("max_num_seqs", 2.5), ("max_num_batched_tokens", 64.0), ("max_model_len", 100.5), ("num_threads", 1.5),
    ("seed", 1.5), ("seed", True),
])
def test_integer_engine_options_refuse_floats_and_bools(llama_model, option, value):
    with pytest.raises(ValueError, match=f"{option} must be .*integer, got {value!r}"):
        cpu_engine(llama_model, **{"num_blocks": 64, option: value})


def test_kv_cache_mb_may_be_fractional_and_other_options_are_type_checked(llama_model):
    assert cpu_engine(llama_model, kv_cache_mb=0.5).num_blocks == 0.5 * 2**20 // (2 * 2 * 16 * 2 * 16 * 4)
    for options, message in (({"kv_cache_mb": float("inf")}, "kv_cache_mb must be a positive, finite number"),
                             ({"kv_cache_mb": True}, "kv_cache_mb must be"),
                             ({"eviction": None}, "eviction must be one of"),
                             ({"scheduling": 1}, "scheduling must be one of"),
                             ({"verify_hits": "yes"}, "verify_hits must be True or False")):
        with pytest.raises(ValueError, match=message):
            cpu_engine(llama_model, **options)


def test_a_non_string_cache_salt_is_refused_and_nothing_is_queued(engine):
    for salt in (123, b"tenant", ["a"]):
        with pytest.raises(InvalidRequestError, match=f"cache_salt must be a string or None, not {type(salt).__name__}"):
            engine.add_request("salted", [1, 2, 3], cache_salt=salt)
        with pytest.raises(InvalidRequestError, match="cache_salt must be a string"):
            engine.generate([[1, 2, 3]], cache_salt=salt)
    assert not engine.has_unfinished_requests()
    _serves(engine)
