"""Four apps of shared/cases/lint ported to the builder with their mistakes kept: made stable, or refused.

- ``pc101_datetime_system``: the current minute in the system prompt -> refused (VolatileValueError);
- ``pc201_compress_each_turn``: the history compressed on every mention -> refused (HistoryRewriteError);
- ``pc303_shuffle_tools``: the tools shuffled before every request -> made stable (sorted, canonical JSON);
- ``pc403_two_builders``: one persona joined with ``"\\n"`` and ``"\\n\\n"`` -> refused (WhitespaceDriftError).
"""

from __future__ import annotations

import datetime
import json
import random

import httpx2
import openai
import pytest

from promptcache import Conversation, PrefixStabilityError, PromptBuilder
from promptcache.errors import HistoryRewriteError, VolatileValueError, WhitespaceDriftError
from promptcache.prompt.stability import LayerRegistry

CHAT_REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


@pytest.fixture
def openai_client():
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(200, json=CHAT_REPLY)

    client = openai.OpenAI(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    return client, seen


def test_pc101_datetime_in_system_is_refused(lint_cases_dir) -> None:
    assert "Current time: {datetime.now():%Y-%m-%d %H:%M}" in (lint_cases_dir / "pc101_datetime_system.py").read_text()
    scheduler_rules = (
        "You are a meeting scheduler for a distributed engineering team. "
        "Propose at most three slots, never before 09:00 or after 17:00 in each attendee's time zone, "
        "and always leave 15 minutes between back-to-back meetings."
    )

    def propose_slots(request_text: str, busy_blocks: str, now: datetime.datetime) -> dict:
        prompt = (PromptBuilder(registry=LayerRegistry())
                  .system(f"{scheduler_rules}\nCurrent time: {now:%Y-%m-%d %H:%M}")  # the mistake, kept
                  .user(f"Busy blocks:\n{busy_blocks}\n\nRequest: {request_text}").build())
        return prompt.to_anthropic(model="claude-sonnet-4-5", max_tokens=800)

    with pytest.raises(VolatileValueError) as info:
        propose_slots("30 min with Ana", "Mon 10-11", datetime.datetime(2026, 3, 18, 14, 5))
    assert isinstance(info.value, PrefixStabilityError) and info.value.layer == "system"
    assert str(info.value).startswith("system layer: datetime value '2026-03-18 14:05' at line 2, column 15")
    assert "context={'current_time': ...}" in str(info.value)
    # the fix the message names: the time goes into the turn, and the prefix is identical across minutes
    bodies = [PromptBuilder(registry=LayerRegistry()).system(scheduler_rules)
              .user("Request: 30 min with Ana", context={"current_time": f"{now:%Y-%m-%d %H:%M}"}).build()
              .to_anthropic(model="claude-sonnet-4-5", max_tokens=800)
              for now in (datetime.datetime(2026, 3, 18, 14, 5), datetime.datetime(2026, 3, 18, 14, 6))]
    assert bodies[0]["system"] == bodies[1]["system"] and bodies[0]["messages"] != bodies[1]["messages"]


def test_pc201_compress_each_turn_is_refused(lint_cases_dir, openai_client) -> None:
    assert "compress_history(history, keep_recent=4)" in (lint_cases_dir / "pc201_compress_each_turn.py").read_text()
    client, seen = openai_client
    oncall_prompt = ("You are the on-call helper in #ops. Give runbook links when you know them and keep answers "
                     "under 120 words.")
    threads: dict[str, Conversation] = {}

    def compress_history(history: Conversation, keep_recent: int) -> Conversation:
        """The app's helper: replace everything but the last few messages by a summary, in place."""
        if len(history) <= keep_recent:
            return history
        summary = {"role": "user", "content": "Earlier: " + " / ".join(m.text[:30] for m in history[:-keep_recent])}
        history[:-keep_recent] = [summary]  # the mistake, kept
        return history

    def on_mention(event: dict) -> str:
        thread_ts = event.get("thread_ts", event["ts"])
        history = threads.setdefault(thread_ts, Conversation())
        history.append({"role": "user", "content": event["text"]})
        history = compress_history(history, keep_recent=4)
        prompt = PromptBuilder(registry=LayerRegistry()).system(oncall_prompt).history(history).build()
        completion = client.chat.completions.create(**prompt.to_openai_chat(model="gpt-4o-mini"))
        answer = completion.choices[0].message.content
        history.append({"role": "assistant", "content": answer})
        return answer

    on_mention({"ts": "1.0", "text": "db-primary CPU at 95%"})
    on_mention({"ts": "1.0", "text": "still high after failover?"})
    with pytest.raises(HistoryRewriteError, match=r"history\[:-4\] was already sent; editing "
                                                  r"it rewrites the cached prefix\. Fix: only append"):
        on_mention({"ts": "1.0", "text": "now replica lag too"})
    assert len(seen) == 2  # the rewritten request never left the process
    assert [m.text for m in threads["1.0"]][:4] == ["db-primary CPU at 95%", "ok", "still high after failover?", "ok"]
    # the same mistake with a copy of the list, handed back with sync(): refused too
    rewritten = [{"role": "user", "content": "Earlier: db-primary CPU at 95%"}, *threads["1.0"].to_openai_chat()[2:]]
    with pytest.raises(HistoryRewriteError, match=r"history\[0\] was already sent and now differs"):
        threads["1.0"].sync(rewritten)


def test_pc303_shuffled_tools_are_made_stable(lint_cases_dir, openai_client) -> None:
    assert "random.shuffle(tools)" in (lint_cases_dir / "pc303_shuffle_tools.py").read_text()
    client, seen = openai_client
    research_prompt = ("You are a research assistant. Pick whichever search tool best fits the question; do not "
                       "favour the first one listed.")
    search_tools = [{"type": "function", "function": {"name": name, "description": f"Search {name.split('_')[1]}.",
                                                      "parameters": {"type": "object", "required": ["query"],
                                                                     "properties": {"query": {"type": "string"},
                                                                                    "limit": {"type": "integer"}}}}}
                    for name in ("search_web", "search_papers", "search_patents", "search_news", "search_code")]
    rng = random.Random(303)

    def research(question: str) -> str:
        tools = list(search_tools)
        rng.shuffle(tools)  # the mistake, kept
        tools = [{"function": t["function"], "type": "function"} if rng.random() < 0.5 else t for t in tools]
        prompt = PromptBuilder(registry=LayerRegistry()).system(research_prompt).tools(tools).user(question).build()
        completion = client.chat.completions.create(**prompt.to_openai_chat(model="gpt-4.1"))
        return completion.choices[0].message.content

    for question in ("graphene batteries", "CRISPR patents", "Rust async runtimes", "solar news", "llm caching"):
        research(question)
    bodies = [json.loads(raw) for raw in seen]
    assert len({json.dumps(b["tools"]) for b in bodies}) == 1
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == [
        "search_code", "search_news", "search_papers", "search_patents", "search_web"]
    # byte-identical on the wire except the question: system message before it, tools after it
    assert len({raw[:raw.index(b'{"role":"user"')] for raw in seen}) == 1
    assert len({raw[raw.index(b'"tools":'):] for raw in seen}) == 1


def test_pc403_two_builders_are_refused(lint_cases_dir, openai_client) -> None:
    assert 'return f"{PERSONA}\\n\\n{HOUSE_STYLE}"' in (lint_cases_dir / "pc403_two_builders.py").read_text()
    client, seen = openai_client
    persona = "You write product descriptions for an outdoor gear shop."
    house_style = "Use short sentences, mention weight in grams, and avoid superlatives."
    registry = LayerRegistry()  # the process-wide default in an app; a fresh one keeps the test independent

    def chat_system_prompt() -> str:
        return persona + "\n" + house_style

    def batch_system_prompt() -> str:
        return f"{persona}\n\n{house_style}"  # the mistake, kept

    def describe(system: str, notes: str) -> str:
        prompt = PromptBuilder(registry=registry).system(system).user(notes).build()
        return client.chat.completions.create(**prompt.to_openai_chat(model="gpt-4o-mini")).choices[0].message.content

    describe(chat_system_prompt(), "2-person tent, 1450 g")
    with pytest.raises(WhitespaceDriftError, match=r"^system layer: this text equals one built earlier in this "
                                                   r"process except for whitespace"):
        describe(batch_system_prompt(), "stove, 320 g")
    assert len(seen) == 1
    # the fix the message names: one builder, the parts as sections joined by the canonical separator
    for notes in ("2-person tent", "stove"):
        prompt = PromptBuilder(registry=LayerRegistry()).system(persona, house_style).user(notes).build()
        assert prompt.system_text == f"{persona}\n\n{house_style}"
