"""The breakpoint planner: per-model minimums, at most 4 markers, TTL order, unknown models."""

from __future__ import annotations

import json

import pytest

from promptcache import PromptBuilder
from promptcache.breakpoints import Boundary, plan_breakpoints
from promptcache.providers import UnknownModelWarning, model_profile
from promptcache.stability import LayerRegistry

SECTION = " ".join(f"Guideline {i}: keep answers short, friendly and specific to the order in question."
                   for i in range(1, 61))  # ~1,150 tokens


def prompt():
    return (PromptBuilder(registry=LayerRegistry()).system(SECTION).document(SECTION + " Extra.", name="a")
            .document(SECTION + " More.", name="b").example("q", "a").user("Hello").build())


def markers(body: dict) -> list[str]:
    """Where the cache_control markers are, as 'system[i]' / 'messages[i]' / 'tools[i]' / 'top'."""
    out = ["top"] if "cache_control" in body else []
    for key in ("tools", "system"):
        out += [f"{key}[{i}]" for i, block in enumerate(body.get(key, [])) if "cache_control" in block]
    out += [f"messages[{i}]" for i, m in enumerate(body["messages"]) if any("cache_control" in b for b in m["content"])]
    return out


def test_boundaries_are_the_whole_prompt_counts() -> None:
    p = prompt()
    plan = p.breakpoints("claude-sonnet-4-6")
    counts = {b.layer: b.prefix_tokens for b in plan.breakpoints}
    assert counts["history"] == p.count_tokens() == len(p.to_tokens())
    assert counts["system"] < counts["documents"] < counts["examples"] < counts["history"]


@pytest.mark.parametrize(("model", "minimum", "placed"), [
    ("claude-opus-5", 512, ["system", "documents", "examples", "history"]),
    ("claude-sonnet-4-6", 1024, ["system", "documents", "examples", "history"]),
    ("claude-opus-4-7", 2048, ["documents", "examples", "history"]),
    ("claude-haiku-4-5", 4096, []),
])
def test_no_breakpoint_below_the_model_minimum(model: str, minimum: int, placed: list[str]) -> None:
    p = prompt()
    plan = p.breakpoints(model)
    assert plan.profile.min_cacheable_tokens == minimum
    assert [b.layer for b in plan.breakpoints] == placed
    assert all(b.prefix_tokens >= minimum for b in plan.breakpoints)
    assert all(f"below the {minimum:,}-token minimum of {model}" in why for _, why in plan.skipped)


def test_marker_positions_and_ttls_in_the_body() -> None:
    p = (PromptBuilder(registry=LayerRegistry()).system(SECTION).document(SECTION + " Extra.", name="a")
         .document(SECTION + " More.", name="b").example("q", "a").cache_ttl(documents="1h").user("Hello").build())
    body = p.to_anthropic("claude-sonnet-4-6")
    assert markers(body) == ["system[0]", "system[2]", "system[3]", "messages[0]"]  # last document, not each
    assert [b.get("cache_control") for b in body["system"]] == [
        {"type": "ephemeral", "ttl": "1h"}, None, {"type": "ephemeral", "ttl": "1h"}, {"type": "ephemeral"}]


def test_a_top_level_cache_control_takes_a_slot() -> None:
    body = prompt().to_anthropic("claude-sonnet-4-6", cache_control={"type": "ephemeral"})
    assert markers(body) == ["top", "system[0]", "system[2]", "messages[0]"]  # the ~20-token examples gain least
    plan = prompt().breakpoints("claude-sonnet-4-6", reserved=1)
    assert plan.skipped == (("examples", "no slot left (4 per request, 1 reserved)"),)


def test_tools_only_prefix_marks_the_last_tool() -> None:
    tools = [{"name": f"tool_{i}", "description": SECTION[:400], "input_schema": {"type": "object"}} for i in range(12)]
    body = PromptBuilder(registry=LayerRegistry()).tools(tools).user("q").build().to_anthropic("claude-sonnet-4-6")
    assert markers(body) == ["tools[11]", "messages[0]"]


def test_planner_keeps_the_moving_breakpoint_and_drops_the_smallest_gain() -> None:
    profile = model_profile("anthropic", "claude-sonnet-4-6")
    boundaries = [Boundary("system", 2000), Boundary("documents", 9000), Boundary("examples", 9100),
                  Boundary("history", 9500)]
    plan = plan_breakpoints(boundaries, "claude-sonnet-4-6", reserved=2, profile=profile)
    assert [b.layer for b in plan.breakpoints] == ["documents", "history"]
    assert [layer for layer, _ in plan.skipped] == ["examples", "system"]
    assert plan_breakpoints(boundaries, "claude-sonnet-4-6", reserved=4, profile=profile).breakpoints == ()
    with pytest.raises(ValueError, match="distinct layers in prompt order"):
        plan_breakpoints(boundaries[::-1], "claude-sonnet-4-6", profile=profile)
    with pytest.raises(ValueError, match=r"documents layer: a 1h breakpoint may not follow the 5m one of the system"):
        plan_breakpoints([Boundary("system", 2000, "5m"), Boundary("documents", 9000, "1h")], "claude-sonnet-4-6")


def test_unknown_model_gets_the_most_conservative_minimum_with_a_warning() -> None:
    with pytest.warns(UnknownModelWarning, match=r"model 'claude-nova-9-planner-test' has no entry.*"
                                                  r"min cacheable tokens 4096"):
        plan = prompt().breakpoints("claude-nova-9-planner-test")
    assert plan.profile.min_cacheable_tokens == 4096 and plan.breakpoints == ()
    assert "below the 4,096-token minimum of claude-nova-9-planner-test" in plan.explain()


def test_explain_lists_every_candidate() -> None:
    text = prompt().breakpoints("claude-opus-4-7").explain()
    assert text.splitlines()[0].startswith("documents: cache_control ttl=5m after ")
    assert text.splitlines()[-1].startswith("system: no breakpoint (prefix of ")
    assert json.dumps(prompt().to_anthropic("claude-opus-4-7")).count("cache_control") == 3
