"""Scheduler behaviour with a real tiny model: prefix-aware admission, longest-prefix-match order,
token budget, and batching of segments."""

from __future__ import annotations

from backend_support import cpu_engine, random_tokens

from local_backend import SamplingParams
from local_backend.model_runner import Segment, group_segments

PARAMS = SamplingParams(max_tokens=2, temperature=0.0, ignore_eos=True)


def test_requests_sent_together_compute_a_shared_prefix_once(llama_model):
    prefix = random_tokens(64, seed=1)
    prompts = [prefix + random_tokens(5, seed=10 + i) for i in range(4)]
    aware = cpu_engine(llama_model, num_blocks=64)
    assert [o.num_cached_tokens for o in aware.generate(prompts, PARAMS)] == [0, 64, 64, 64]
    assert aware.stats()["tokens"]["computed_prompt_tokens"] == 69 + 3 * 5
    naive = cpu_engine(llama_model, num_blocks=64, prefix_aware_admission=False)
    assert [o.num_cached_tokens for o in naive.generate(prompts, PARAMS)] == [0, 0, 0, 0]
    assert naive.stats()["kv"]["blocks_cached_total"] == 4  # the 4 copies were de-duplicated into one chain


def test_longest_prefix_match_admits_the_best_cached_request_first(llama_model):
    warm = random_tokens(48, seed=2)
    for scheduling, expected_first in (("fcfs", "cold"), ("lpm", "warm")):
        engine = cpu_engine(llama_model, num_blocks=64, max_num_seqs=1, scheduling=scheduling)
        engine.generate([warm + [1]], PARAMS)
        engine.add_request("cold", random_tokens(40, seed=3), PARAMS)
        engine.add_request("warm", warm + [2, 3], PARAMS)
        first = engine.step()
        assert [d.request_id for d in first] == [expected_first]
        while engine.has_unfinished_requests():
            engine.step()


def test_the_token_budget_bounds_every_step(llama_model):
    engine = cpu_engine(llama_model, num_blocks=64, max_num_batched_tokens=24)
    batches = []
    original = engine.scheduler.schedule

    def spy():
        out = original()
        batches.append(out.num_batched_tokens)
        return out

    engine.scheduler.schedule = spy
    engine.generate([random_tokens(50, seed=4), random_tokens(30, seed=5)], SamplingParams(max_tokens=4))
    assert max(batches) == 24 and sum(batches) == 50 + 30 + 2 * 3


def test_segments_are_grouped_by_length_with_bounded_padding():
    def seg(n: int) -> Segment:
        return Segment([0] * n, 0, [0])

    assert group_segments([seg(1)] * 6) == [[0, 1, 2, 3, 4, 5]]
    assert group_segments([seg(1)] + [seg(64)] * 5) == [[1, 2, 3, 4, 5, 0]]  # a decode joins the prefill batch
    assert group_segments([seg(100), seg(20), seg(1)]) == [[0], [1], [2]]
    assert group_segments([seg(40), seg(47), seg(44)]) == [[1, 2, 0]]
