"""The runtime guard the client wrappers run (PrefixGuard.check), replayed over the shared traces."""

from __future__ import annotations

import pytest

from promptcache.misses.guard import PrefixGuard

# The README's verdict per bad trace: (0-based request of the first unexpected divergence, cause, layer).
FIRST_MISS = {
    "bad_timestamp_system": (1, "volatile_value", "system"),
    "bad_agent_tool_shuffle": (1, "tools_changed", "tools"),
    "bad_summarize_each_turn": (1, "history_rewritten", "history"),
    "bad_sliding_window": (3, "history_rewritten", "history"),
    "bad_whitespace_drift": (1, "whitespace_only", "system"),
    "bad_rag_question_first": (1, "new_turn", "turn"),
}


def reported(records) -> list[tuple[int, object]]:
    guard = PrefixGuard()  # one guard for the whole trace: any session, the api inferred from each body
    return [(i, d) for i, r in enumerate(records) if (d := guard.check(r.body)) is not None]


@pytest.mark.parametrize("name", sorted(FIRST_MISS))
def test_the_guard_names_the_first_miss_of_each_bad_trace(traces, name: str) -> None:
    index, cause, layer = FIRST_MISS[name]
    first, divergence = reported(traces[name])[0]
    assert (first, divergence.cause, divergence.layer) == (index, cause, layer)
    assert divergence.hint and not divergence.expected


@pytest.mark.parametrize("name", ["good_support_chat", "good_rag_doc_qa", "good_agent_tools", "mixed_multi_tenant"])
def test_the_guard_is_silent_on_the_good_traces(traces, name: str) -> None:
    assert reported(traces[name]) == []
