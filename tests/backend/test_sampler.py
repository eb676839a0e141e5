"""The sampler on its own: which tokens each rule may pick, in what proportions, at what cost in operations.

Proportions are checked on 4,000 seeded draws against the exact nucleus
distribution with a tolerance of 4.5 binomial standard deviations (at most
0.035 here); the sets of tokens that may be drawn are checked exactly. Both
top-p paths are checked: rejection sampling (the common one) and the sort it
falls back to (forced by ``MAX_REJECTIONS = 0``). Top-k keeps every token tied
at the k-th place, checked exactly against transformers' ``TopKLogitsWarper``.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
import torch
from torch.overrides import TorchFunctionMode
from transformers.generation.logits_process import TopKLogitsWarper

import local_backend.sampler as sampler_module
from local_backend.request import Request
from local_backend.sampler import Sampler
from local_backend.sampling_params import SamplingParams

DRAWS = 4000
SIGMAS = 4.5


def request(params: SamplingParams, request_id: str = "r") -> Request:
    return Request(request_id, [1], params, 16, None)


def draw_counts(probs: list[float], params: SamplingParams, draws: int = DRAWS) -> Counter:
    return draw_counts_from(torch.tensor([probs]).log(), params, draws)


def draw_counts_from(logits: torch.Tensor, params: SamplingParams, draws: int = DRAWS) -> Counter:
    """How often each token is drawn from ``logits`` (``[1, vocab]``, any float dtype)."""
    sampler = Sampler(seed=7)
    counts: Counter = Counter()
    for _ in range(draws):
        out = sampler.sample(logits, [request(params)])
        assert not out.errors, out.errors
        counts[out.token_ids["r"]] += 1
    return counts


def assert_proportions(counts: Counter, expected: dict[int, float]) -> None:
    assert set(counts) == set(expected), counts  # exactly the tokens that may be drawn
    total = sum(counts.values())
    for token, p in expected.items():
        tolerance = SIGMAS * math.sqrt(p * (1 - p) / total)
        assert abs(counts[token] / total - p) <= tolerance, (token, counts[token] / total, p)


@pytest.fixture(params=["rejection", "sort"])
def top_p_path(request, monkeypatch):
    """Each top-p path in turn: rejection sampling, or the sort it falls back to."""
    if request.param == "sort":
        monkeypatch.setattr(sampler_module, "MAX_REJECTIONS", 0)
    return request.param


def test_top_p_draws_from_the_nucleus_in_proportion(top_p_path):
    # 0.5 + 0.3 = 0.8 passes 0.75 with room to spare (top_p=0.8 would sit on the edge, within float rounding)
    counts = draw_counts([0.5, 0.3, 0.15, 0.05], SamplingParams(temperature=1.0, top_p=0.75))
    assert_proportions(counts, {0: 0.5 / 0.8, 1: 0.3 / 0.8})


def test_tokens_tied_at_the_edge_of_the_nucleus_are_all_kept(top_p_path):
    # 0.4 + 0.2 reaches 0.5; the other 0.2 ties with the last token in and is kept; the 0.1s are out
    counts = draw_counts([0.1, 0.2, 0.4, 0.1, 0.2], SamplingParams(temperature=1.0, top_p=0.5))
    assert_proportions(counts, {2: 0.5, 1: 0.25, 4: 0.25})


def test_top_k_then_top_p_renormalise_over_the_kept_tokens():
    counts = draw_counts([0.05, 0.3, 0.5, 0.15], SamplingParams(temperature=1.0, top_k=3, top_p=0.7))
    # top-3: 0.5, 0.3, 0.15 (sum 0.95); nucleus of 0.7 over them: 0.5/0.95 + 0.3/0.95 = 0.84 reaches it
    assert_proportions(counts, {2: 0.5 / 0.8, 1: 0.3 / 0.8})


def test_top_k_keeps_every_token_tied_at_the_kth_place():
    counts = draw_counts_from(torch.tensor([[1.0, 1.0, 1.0, 0.0]]), SamplingParams(temperature=1.0, top_k=2))
    assert_proportions(counts, {0: 1 / 3, 1: 1 / 3, 2: 1 / 3})


def test_top_k_keeps_tokens_tied_in_bfloat16_logits():
    # 1.0, 1.001 and 1.002 are one bfloat16 value (1.0): the three tie at the 2nd place and are all kept
    logits = torch.tensor([[2.0, 1.0, 1.001, 0.0, 1.002]]).to(torch.bfloat16)
    counts = draw_counts_from(logits, SamplingParams(temperature=1.0, top_k=2))
    e = math.e
    assert_proportions(counts, {0: e / (e + 3), 1: 1 / (e + 3), 2: 1 / (e + 3), 4: 1 / (e + 3)})


def test_top_k_keeps_what_transformers_keeps_on_bfloat16_rows():
    # random bf16 rows over the embedded vocabulary tie at the 50th place more often than not
    rows = (torch.randn(12, 100_266, generator=torch.Generator().manual_seed(8)) * 3).to(torch.bfloat16).float()
    tied_rows = 0
    for row in rows:
        values, token_ids = sampler_module._top_k(row, 50)
        kept = TopKLogitsWarper(50)(None, row[None])[0] > float("-inf")
        assert set(token_ids.tolist()) == set(kept.nonzero().squeeze(1).tolist())
        assert torch.equal(values, row[token_ids]) and bool((values[:-1] >= values[1:]).all())  # most likely first
        tied_rows += len(token_ids) > 50
    assert tied_rows >= 3, tied_rows  # the tie path ran


def test_top_k_then_top_p_keep_a_tie_at_the_kth_place():
    # top-2 keeps 0.4 and both 0.25s; the nucleus of 0.5 over them (0.4/0.9 = 0.44 < 0.5) reaches the tied pair
    counts = draw_counts([0.4, 0.25, 0.1, 0.25], SamplingParams(temperature=1.0, top_k=2, top_p=0.5))
    assert_proportions(counts, {0: 0.4 / 0.9, 1: 0.25 / 0.9, 3: 0.25 / 0.9})


def test_temperature_reshapes_the_distribution():
    counts = draw_counts([0.8, 0.2], SamplingParams(temperature=2.0))
    low, high = math.sqrt(0.2), math.sqrt(0.8)  # p ** (1 / T), renormalised
    assert_proportions(counts, {0: high / (low + high), 1: low / (low + high)})


@pytest.mark.parametrize("top_k", [0, 40])
def test_on_a_flat_100k_vocabulary_every_top_p_draw_is_in_the_nucleus(top_p_path, top_k):
    logits = torch.randn(1, 100_266, generator=torch.Generator().manual_seed(3)) * 0.45  # the embedded model's spread
    params = SamplingParams(temperature=0.8, top_p=0.9, top_k=top_k)
    scores = logits[0] / 0.8
    if top_k:
        scores = scores.masked_fill(scores < torch.topk(scores, top_k).values[-1], float("-inf"))
    sorted_probs, order = torch.softmax(scores, -1).sort(descending=True)
    nucleus = set(order[(sorted_probs.cumsum(0) - sorted_probs) < 0.9].tolist())  # the sort-based definition
    assert 70_000 < len(nucleus) < 80_000 or top_k
    sampler = Sampler(seed=1)
    drawn = [sampler.sample(logits, [request(params)]).token_ids["r"] for _ in range(60)]
    assert set(drawn) <= nucleus and len(set(drawn)) > (20 if top_k else 50)


def test_the_common_path_neither_sorts_the_vocabulary_nor_draws_one_number_per_token():
    class Recorder(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    logits = torch.randn(8, 100_266, generator=torch.Generator().manual_seed(4)) * 0.45
    kinds = [SamplingParams(temperature=0.0), SamplingParams(temperature=0.8),
             SamplingParams(temperature=0.8, top_p=0.9), SamplingParams(temperature=0.8, top_p=0.9, seed=5)]
    requests = [request(kinds[i % 4], f"r{i}") for i in range(8)]
    sampler = Sampler(seed=0)
    with Recorder() as recorder:
        out = sampler.sample(logits, requests)
    assert len(out.token_ids) == 8 and not out.errors
    assert not {"sort", "multinomial", "isfinite", "exponential_"} & set(recorder.calls), recorder.calls
    assert recorder.calls.count("argmax") == 1  # the greedy rows, together
    assert recorder.calls.count("rand") >= 6  # one uniform number per sampled row, plus any top-p rejection


NAN, INF = float("nan"), float("inf")
GREEDY, SAMPLED = SamplingParams(temperature=0.0), SamplingParams(temperature=0.7, top_p=0.9)
TOP_K = SamplingParams(temperature=0.7, top_k=2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_greedy_takes_the_argmax_and_a_nan_row_fails_alone(dtype):
    logits = torch.tensor([[0.0, 3.0, 1.0], [0.0, NAN, 1.0], [2.0, 0.0, 1.0], [1.0, NAN, 0.0], [1.0, 0.0, NAN]],
                          dtype=dtype)
    requests = [request(GREEDY, "a"), request(GREEDY, "b"), request(SAMPLED, "c"), request(SAMPLED, "d"),
                request(TOP_K, "e")]
    out = Sampler().sample(logits, requests)
    assert out.token_ids["a"] == 1 and out.token_ids["c"] in (0, 2) and set(out.token_ids) == {"a", "c"}
    message = ("SamplingError: the model produced a NaN logit at this position (a numerical overflow: float32 or "
               "bfloat16 instead of float16 may help)")
    assert out.errors == {"b": message, "d": message, "e": message}


def test_a_nan_row_fails_under_top_k_even_when_tokens_tie_at_the_kth_place():
    # torch.topk ranks NaN first; the tie re-scan (scores >= the k-th) would drop it and sample the row
    logits = torch.tensor([[NAN, 1.0, 1.0, 1.0, 0.0], [2.0, 1.0, 1.0, 1.0, 0.0]])
    out = Sampler().sample(logits, [request(TOP_K, "nan"), request(TOP_K, "tie")])
    assert out.errors == {"nan": "SamplingError: the model produced a NaN logit at this position (a numerical "
                                 "overflow: float32 or bfloat16 instead of float16 may help)"}
    assert out.token_ids["tie"] in (0, 1, 2, 3) and set(out.token_ids) == {"tie"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_positive_infinite_logit_fails_a_sampled_row_and_is_the_argmax_of_a_greedy_one(dtype):
    logits = torch.tensor([[0.0, INF, 1.0], [0.0, INF, 1.0], [INF, 0.0, 1.0], [0.0, 2.0, 1.0]], dtype=dtype)
    requests = [request(GREEDY, "greedy"), request(SAMPLED, "sampled"), request(TOP_K, "top-k"),
                request(SAMPLED, "fine")]
    out = Sampler().sample(logits, requests)
    assert out.token_ids["greedy"] == 1 and set(out.token_ids) == {"greedy", "fine"}
    message = ("SamplingError: the model produced a +inf logit at this position (a numerical overflow: float32 or "
               "bfloat16 instead of float16 may help); sampling needs finite logits")
    assert out.errors == {"sampled": message, "top-k": message}


def test_a_row_of_negative_infinities_fails_greedy_and_sampled_alike():
    logits = torch.tensor([[-INF, -INF, -INF], [-INF, -INF, -INF], [-INF, 0.0, -INF]])
    out = Sampler().sample(logits, [request(GREEDY, "greedy"), request(SAMPLED, "sampled"), request(SAMPLED, "one")])
    message = "SamplingError: every logit the model produced at this position is -inf: no token can be chosen"
    assert out.errors == {"greedy": message, "sampled": message} and out.token_ids == {"one": 1}


def test_logits_that_overflow_under_the_temperature_fail_alone():
    logits = torch.tensor([[3e38, 0.0], [1.0, 0.0]])
    params = SamplingParams(temperature=1e-4)
    out = Sampler().sample(logits, [request(params, "huge"), request(params, "fine")])
    assert out.errors == {"huge": "SamplingError: temperature 0.0001 makes the probabilities non-finite (the logits "
                                  "divided by it overflow float32); use a larger temperature, or 0 for greedy"}
    assert out.token_ids == {"fine": 0}


def test_a_seed_repeats_its_draws_and_another_seed_differs():
    logits = torch.randn(1, 1000, generator=torch.Generator().manual_seed(6))

    def run(seed: int) -> list[int]:
        sampler = Sampler(seed=0)
        params = SamplingParams(temperature=1.0, top_p=0.9, seed=seed)
        tokens = [sampler.sample(logits, [request(params, "s")]).token_ids["s"] for _ in range(20)]
        sampler.release("s")
        return tokens

    assert run(11) == run(11) == run(11 + 2**64) and run(11) != run(12)
