"""``finish_request``: a request ended from outside the engine (a stop string) counts as finished, not aborted."""

from __future__ import annotations

from backend_support import cpu_engine, random_tokens

from local_backend import SamplingParams


def test_finish_request_counts_the_request_as_finished_with_its_tokens(llama_model):
    engine = cpu_engine(llama_model, num_blocks=64, block_size=16)
    prompt = random_tokens(40, seed=11)
    engine.add_request("stopped", prompt, SamplingParams(max_tokens=20, temperature=0.0, ignore_eos=True))
    outputs = [engine.step(), engine.step(), engine.step()]
    assert [len(step) for step in outputs] == [1, 1, 1] and not any(o.finished for step in outputs for o in step)

    assert engine.finish_request("stopped", stop_reason="END") is True
    assert engine.finish_request("stopped") is False and engine.abort_request("stopped") is False
    assert not engine.has_unfinished_requests() and engine.step() == []
    stats = engine.stats()
    assert stats["requests"]["finished"] == 1 and stats["requests"]["aborted"] == 0
    assert stats["tokens"]["prompt_tokens"] == 40 and stats["tokens"]["generated_tokens"] == 3
    assert engine.kv_usage().blocks_used == 0
    assert engine.kv_usage().blocks_cached_evictable == 2  # the prompt's two full blocks stay cached

    (again,) = engine.generate([prompt], SamplingParams(max_tokens=1, temperature=0.0))
    assert again.num_cached_tokens == 32
    assert engine.finish_request("never-added") is False
