"""A request that fails fails alone: the other requests complete and later calls are served.

Failures are produced by real models: a tiny Llama whose embedding row of one
token is NaN (a request containing it gets NaN activations, as an fp16
overflow would give), and a tiny Llama whose forward raises once (a device
failure). Sampling parameters that used to jam the engine (a temperature of
1e-45, a seed beyond 64 bits) are served.
"""

from __future__ import annotations

import copy

import pytest
import torch
from backend_support import VOCAB, cpu_engine, random_tokens, tiny_llama

from local_backend import SamplingParams
from local_backend.sampling_params import SAMPLING_EPS

POISON = VOCAB - 1
"""The token whose embedding row is NaN in :func:`poisoned_llama`."""


def clean_tokens(n: int, seed: int) -> list[int]:
    return [t for t in random_tokens(n + 8, seed) if t != POISON][:n]


@pytest.fixture(scope="module")
def poisoned_llama(llama_model):
    """A copy of the tiny Llama whose embedding of :data:`POISON` is NaN."""
    model = copy.deepcopy(llama_model)
    with torch.no_grad():
        model.get_input_embeddings().weight[POISON] = float("nan")
    return model


def test_a_temperature_below_the_sampling_epsilon_is_greedy(llama_model):
    assert SAMPLING_EPS == 1e-5  # vLLM's _SAMPLING_EPS
    assert SamplingParams(temperature=1e-45).greedy and SamplingParams(temperature=9e-6).greedy
    assert not SamplingParams(temperature=SAMPLING_EPS).greedy
    engine = cpu_engine(llama_model, num_blocks=64)
    prompt = random_tokens(20, seed=50)
    tiny, greedy = engine.generate([prompt, prompt], [SamplingParams(max_tokens=4, temperature=1e-45),
                                                      SamplingParams(max_tokens=4, temperature=0.0)])
    assert tiny.outputs[0].finish_reason == "length"
    assert tiny.outputs[0].token_ids == greedy.outputs[0].token_ids
    assert not engine.has_unfinished_requests()


@pytest.mark.parametrize("seed", [2**70, -1, 2**64 - 1])
def test_any_integer_seed_is_served_and_seeds_equal_mod_2_64_sample_alike(llama_model, seed):
    engine = cpu_engine(llama_model, num_blocks=64, seed=2**65 + 3)  # the engine's own seed is reduced too
    prompt = random_tokens(20, seed=51)
    (big,) = engine.generate([prompt], SamplingParams(max_tokens=6, temperature=1.0, seed=seed))
    (reduced,) = engine.generate([prompt], SamplingParams(max_tokens=6, temperature=1.0, seed=seed % 2**64))
    assert big.outputs[0].token_ids == reduced.outputs[0].token_ids and len(big.outputs[0].token_ids) == 6
    assert not engine.has_unfinished_requests() and engine.kv_usage().blocks_used == 0


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_a_request_whose_sampling_fails_fails_alone_and_poisons_nothing(llama_model, poisoned_llama, temperature):
    clean = clean_tokens(30, seed=52)
    params = SamplingParams(max_tokens=5, temperature=0.0, ignore_eos=True)
    (expected,) = cpu_engine(llama_model, num_blocks=64).generate([clean], params)

    engine = cpu_engine(poisoned_llama, num_blocks=64)
    # the poisoned request is admitted first: its NaN K/V sit in block 0, and the shorter clean request
    # is batched with it (prefill and decode) with padding in its rows
    engine.add_request("poisoned", [POISON, *clean_tokens(39, seed=53)],
                       SamplingParams(max_tokens=5, temperature=temperature, ignore_eos=True))
    engine.add_request("clean", clean, params)
    outputs = {"poisoned": [], "clean": []}
    while engine.has_unfinished_requests():
        for delta in engine.step():
            outputs[delta.request_id].append(delta)
    (failed,) = outputs["poisoned"]
    assert (failed.finished, failed.finish_reason, failed.new_token_ids) == (True, "error", [])
    assert "NaN" in failed.error
    assert [t for d in outputs["clean"] for t in d.new_token_ids] == expected.outputs[0].token_ids
    assert outputs["clean"][-1].finish_reason == "length" and outputs["clean"][-1].error is None
    assert engine.kv_usage().blocks_used == 0
    assert engine.stats()["requests"]["failed"] == 1
    # later calls are served, and the NaN K/V left in the pool reach no other request
    (again,) = engine.generate([clean], params)
    assert again.outputs[0].token_ids == expected.outputs[0].token_ids
    (offline,) = engine.generate([[POISON, *clean]], SamplingParams(max_tokens=3, temperature=temperature))
    assert (offline.finished, offline.outputs[0].finish_reason, offline.outputs[0].token_ids) == (True, "error", [])
    assert "NaN" in offline.error and not engine.has_unfinished_requests()


def test_generate_aborts_its_requests_when_a_step_fails_and_the_next_call_is_served():
    model = tiny_llama()
    failures = {"armed": 0}

    def fail_when_armed(module, args):
        if failures["armed"]:
            failures["armed"] -= 1
            raise RuntimeError("simulated device failure")

    model.model.layers[0].register_forward_pre_hook(fail_when_armed)
    engine = cpu_engine(model, num_blocks=16)
    prompts = [random_tokens(20, seed=54), random_tokens(25, seed=55)]
    params = SamplingParams(max_tokens=4, temperature=0.0, ignore_eos=True)
    expected = engine.generate(prompts, params)
    failures["armed"] = 1
    with pytest.raises(RuntimeError, match="simulated device failure"):
        engine.generate(prompts, params)
    assert not engine.has_unfinished_requests() and engine.kv_usage().blocks_used == 0
    assert engine.stats()["requests"]["aborted"] == 2
    again = engine.generate(prompts, params)
    assert [o.outputs[0].token_ids for o in again] == [o.outputs[0].token_ids for o in expected]
