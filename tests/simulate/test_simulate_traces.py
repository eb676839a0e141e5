"""Every shared trace under its own provider's rules against its README (traces/README.md).

Read and write shares within +-5 percentage points (the README's tolerance for
a different tokenizer), the first miss with the README's cause, and the cost
difference between the good and bad versions of one app.
"""

from __future__ import annotations

import pytest

from promptcache.simulate import Simulation

# name: (provider, expected read share, expected write share) from the README's table and sections
EXPECTED = {
    "good_support_chat": ("anthropic", 0.92, 0.081),
    "bad_timestamp_system": ("anthropic", 0.0, 1.0),
    "good_rag_doc_qa": ("openai", 0.89, 0.0),
    "bad_rag_question_first": ("openai", 0.0, 0.0),
    "good_agent_tools": ("openai", 0.90, 0.0),
    "bad_agent_tool_shuffle": ("openai", 0.0, 0.0),
    "bad_summarize_each_turn": ("anthropic", 0.0, 1.0),
    "bad_sliding_window": ("openai", 0.087, 0.0),
    "bad_whitespace_drift": ("anthropic", 0.69, 0.31),
    "mixed_multi_tenant": ("openai", 0.82, 0.0),
}

# name: (index of the first request after #1 that misses, its cause); None: no miss after #1
FIRST_MISS = {
    "good_support_chat": None,
    "bad_timestamp_system": (1, "volatile_value"),        # system block differs (new timestamp)
    "good_rag_doc_qa": None,
    "bad_rag_question_first": (1, "new_turn"),            # question precedes the document (unexpected turn)
    "good_agent_tools": None,
    "bad_agent_tool_shuffle": (1, "tools_changed"),       # tools serialised in a new order
    "bad_summarize_each_turn": (1, "history_rewritten"),  # messages[0] rewritten (new summary)
    "bad_sliding_window": (3, "history_rewritten"),       # window slid (#4)
    "bad_whitespace_drift": (1, "whitespace_only"),       # variant A, first use
    "mixed_multi_tenant": (1, "other_cache_key"),         # first request of this tenant
}

# README "cost" figures (relative input cost, uncached = 1.00)
COST = {
    "good_support_chat": 0.19, "bad_timestamp_system": 1.25, "good_rag_doc_qa": 0.33, "bad_rag_question_first": 1.00,
    "good_agent_tools": 0.33, "bad_agent_tool_shuffle": 1.00, "bad_summarize_each_turn": 1.25,
    "bad_sliding_window": 0.94, "bad_whitespace_drift": 0.46, "mixed_multi_tenant": 0.39,
}


def first_miss(simulation: Simulation):
    for request in simulation.requests[1:]:
        if request.miss_cause is not None:
            return request.index, request.miss_cause
    return None


def test_every_shared_trace_is_covered(traces_dir):
    assert {p.stem for p in traces_dir.glob("*.jsonl")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_read_and_write_shares_match_the_readme(simulated, name):
    provider, read, write = EXPECTED[name]
    simulation = simulated(name)
    usage, _ = simulation.totals()
    assert simulation.provider == provider
    assert abs(usage.hit_rate - read) <= 0.05, f"{name}: read {usage.hit_rate:.1%} vs README {read:.1%}"
    assert abs(usage.write_rate - write) <= 0.05, f"{name}: write {usage.write_rate:.1%} vs README {write:.1%}"
    assert all(r.error is None for r in simulation.requests)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_first_miss_has_the_readme_cause(simulated, name):
    simulation = simulated(name)
    assert simulation.requests[0].miss_cause == "first_request"
    assert first_miss(simulation) == FIRST_MISS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_relative_cost_matches_the_readme(simulated, name):
    _, cost = simulated(name).totals()
    assert abs(cost.ratio - COST[name]) <= 0.05, f"{name}: {cost.ratio:.2f}x vs README {COST[name]:.2f}x"


@pytest.mark.parametrize(("good", "bad", "factor"), [
    ("good_support_chat", "bad_timestamp_system", 5.0),    # 0.19x vs 1.25x
    ("good_support_chat", "bad_whitespace_drift", 2.0),    # drift more than doubles input cost (0.46x vs 0.20x)
    ("good_rag_doc_qa", "bad_rag_question_first", 2.5),    # 0.33x vs 1.00x
    ("good_agent_tools", "bad_agent_tool_shuffle", 2.5),   # 0.33x vs 1.00x
])
def test_good_and_bad_versions_show_the_cost_difference(simulated, good, bad, factor):
    good_cost, bad_cost = simulated(good).totals()[1], simulated(bad).totals()[1]
    assert bad_cost.ratio > factor * good_cost.ratio  # input cost relative to no caching
    assert bad_cost.unit == good_cost.unit == "USD"


def test_per_request_details_of_the_readme(simulated):
    support = simulated("good_support_chat").requests
    assert support[1].usage.cache_read > 0.95 * support[1].prompt_tokens  # #2: system prefix written by #1
    assert support[10].usage.cache_read > 0.95 * support[10].prompt_tokens  # #11: automatic caching session
    drift = simulated("bad_whitespace_drift").requests
    assert [r.index for r in drift if r.usage.cache_read == 0] == [0, 1, 2, 4]  # #1 B, #2 A, #3 D, #5 C
    window = simulated("bad_sliding_window").requests
    assert [r.usage.cache_read for r in window[:3]] == [0, 1152, 1408] and not any(
        r.usage.cache_read for r in window[3:])
    assert "slid" in window[3].divergence.detail
    tenants = simulated("mixed_multi_tenant")
    for key, (usage, _) in tenants.groups(lambda r: r.cache_key).items():
        assert 0.80 <= usage.hit_rate <= 0.84, key
    shuffle = simulated("bad_agent_tool_shuffle").requests
    assert all(r.miss_cause == "tools_changed" for r in shuffle[1:])
    assert "equal in canonical form" in shuffle[1].divergence.detail
