"""Conversation: append-only, chunked truncation vs a sliding window, tool pairs kept, cache-safe compaction."""

from __future__ import annotations

import random

import anthropic
import openai
import pytest

from promptcache import Conversation, PromptBuilder
from promptcache.tokens.chatml import encode_chatml
from promptcache.errors import HistoryRewriteError, PromptError
from promptcache.prompt.messages import Message
from promptcache.prompt.stability import LayerRegistry

WORDS = ("tent pole stove kayak order parcel refund return warranty strap zipper jacket boots size colour "
         "delivery courier label exchange store credit invoice receipt photo damage seam buckle paddle").split()
SYSTEM = "You are Harbor, the support assistant. Answer briefly."


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def exchanges(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """``count`` deterministic (question, answer) pairs of ~60-100 and ~150-250 words."""
    rng = random.Random(seed)
    return [(sentence(rng, rng.randint(60, 100)), sentence(rng, rng.randint(150, 250))) for _ in range(count)]


class TokenCache:
    """ChatML token ids per message, memoised; their concatenation is exactly ``encode_chatml`` of the request."""

    def __init__(self) -> None:
        self.ids: dict[int, list[int]] = {}
        self.keep: list[Message] = []

    def of(self, prompt) -> tuple[list[int], int]:
        """(tokens of the whole request, tokens before its turn)."""
        out = encode_chatml([{"role": "system", "content": prompt.system_text}], add_generation_prompt=False)
        for message in prompt.messages:
            if id(message) not in self.ids:
                self.ids[id(message)] = encode_chatml(message.to_openai_chat(), add_generation_prompt=False)
                self.keep.append(message)  # keeps ids unique
            out.extend(self.ids[id(message)])
        return out, len(out) - sum(len(self.ids[id(m)]) for m in prompt.turn)


def breaks(requests: list[tuple[list[int], int]]) -> list[bool]:
    """Per request after the first: True when its prefix (everything before the new turn) does not extend
    the previous request's tokens."""
    return [prefix < len(earlier) or tokens[:len(earlier)] != earlier
            for (earlier, _), (tokens, prefix) in zip(requests, requests[1:])]


def test_200_turns_chunked_truncation_vs_sliding_window(capsys) -> None:
    """The acceptance numbers: 200 turns, a 20k-token budget, low-water mark 10k."""
    base = PromptBuilder(registry=LayerRegistry()).system(SYSTEM)
    cache = TokenCache()
    chunked = Conversation(budget_tokens=20_000)
    chunked_requests, sliding_requests, log = [], [], []
    for n, (question, answer) in enumerate(exchanges(200)):
        prompt = base.history(chunked).user(question).build()
        chunked_requests.append(cache.of(prompt))
        if n in (0, 120, 199):  # the memoised concatenation is the real rendering
            assert chunked_requests[-1][0] == prompt.to_tokens()
        chunked.record(prompt, answer)
        assert chunked.tokens <= 20_000 and chunked.messages[0].role == "user"
        # the same conversation through a sliding window of the same budget: drop the oldest exchange until it fits
        start = 0
        while sum(m.chatml_tokens() for m in log[start:]) > 20_000:
            start += 2
        window = log[start:]
        prompt = base.history(window).user(question).build()
        sliding_requests.append(cache.of(prompt))
        log += [prompt.turn[0], Message("assistant", chunked.messages[-1].blocks)]
    sliding = breaks(sliding_requests)
    chunked_breaks, sliding_breaks = sum(breaks(chunked_requests)), sum(sliding)
    with capsys.disabled():
        print(f"\n200 turns, 20k budget: chunked truncation breaks the prefix {chunked_breaks}x "
              f"({chunked.truncations} truncations); a sliding window breaks it {sliding_breaks}x")
    assert chunked_breaks == chunked.truncations == 4
    assert sliding_breaks == 122
    first = sliding.index(True)  # the window is full from here on: it slides on nearly every turn
    assert sum(sliding[first:]) == sliding_breaks and sliding_breaks / len(sliding[first:]) >= 0.9


def tool_exchange(i: int) -> list[dict]:
    """A user question, an assistant tool call, its result, the answer (OpenAI shape)."""
    call = f"call_{i:04d}"
    return [{"role": "user", "content": f"Where is parcel {i}? " + "Please check. " * 30},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call, "type": "function", "function": {"name": "track", "arguments": '{"parcel": %d}' % i}}]},
            {"role": "tool", "tool_call_id": call, "content": "in transit " * 40},
            {"role": "assistant", "content": "It is in transit. " * 20}]


def test_truncation_never_separates_a_tool_call_from_its_result() -> None:
    conversation = Conversation(budget_tokens=3_000, low_water_tokens=1_200)
    for i in range(40):
        conversation.extend(tool_exchange(i))
        window = conversation.messages
        assert window[0].role == "user" and not window[0].tool_results
        for earlier, later in zip(window, window[1:]):
            if earlier.tool_calls:
                assert {r.tool_call_id for r in later.tool_results} == {c.id for c in earlier.tool_calls}
        assert conversation.tokens == sum(m.chatml_tokens() for m in window) <= 3_000
    assert conversation.truncations == 6 and len(conversation.log) == 160  # 4 messages per exchange


def test_compaction_summarises_once_per_chunk_into_a_fixed_head() -> None:
    calls: list[tuple[int, str | None]] = []

    def compactor(dropped: list[dict], previous: str | None) -> str:
        calls.append((len(dropped), previous))
        return f"Summary #{len(calls)} of {len(dropped)} messages.  \r\n"

    conversation = Conversation(budget_tokens=2_000, compactor=compactor)
    base = PromptBuilder(registry=LayerRegistry()).system(SYSTEM)
    heads = []
    for question, answer in exchanges(30, seed=3):
        prompt = base.history(conversation).user(question[:300]).build()
        conversation.record(prompt, answer[:600])
        heads.append(conversation.messages[0].text)
        assert conversation.messages[0].role == "user" and conversation.messages[1].role == "assistant" \
            or conversation.summary is None
    assert len(calls) == conversation.truncations >= 3
    assert calls[0][1] is None and calls[1][1] == f"Summary #1 of {calls[0][0]} messages."
    assert conversation.summary == f"Summary of the earlier conversation:\nSummary #{len(calls)} of {calls[-1][0]} messages."
    changes = sum(a != b for a, b in zip(heads, heads[1:]))
    assert changes == len(calls)  # the head changes once per compaction, byte-identical in between


def test_history_cannot_be_rewritten() -> None:
    conversation = Conversation([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    with pytest.raises(HistoryRewriteError, match=r"history layer \(history\[0\]\): history\[0\] was already sent; "
                                                  r"editing it rewrites the cached prefix\. Fix: only append"):
        conversation[0] = {"role": "user", "content": "edited"}
    with pytest.raises(HistoryRewriteError, match=r"removing it rewrites the cached prefix"):
        del conversation[:1]
    mine = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    conversation.sync(mine)
    assert len(conversation) == 3
    with pytest.raises(HistoryRewriteError, match=r"history\[1\] was already sent and now differs"):
        conversation.sync([mine[0], {"role": "assistant", "content": "B"}, mine[2], {"role": "assistant", "content": "d"}])
    with pytest.raises(HistoryRewriteError, match=r"history\[2\] was already sent and is missing"):
        conversation.sync(mine[:2])
    assert len(conversation) == 3


def test_appending_is_all_or_nothing() -> None:
    conversation = Conversation([{"role": "user", "content": "a"}])
    with pytest.raises(PromptError, match=r"history\[2\]: two assistant messages in a row"):
        conversation.extend([{"role": "assistant", "content": "b"}, {"role": "assistant", "content": "c"}])
    assert len(conversation) == 1
    with pytest.raises(PromptError, match=r"low_water_tokens: 500 is not below the budget 400"):
        Conversation(budget_tokens=400, low_water_tokens=500)


def test_record_checks_the_prompt_came_from_this_conversation() -> None:
    conversation = Conversation()
    base = PromptBuilder(registry=LayerRegistry()).system(SYSTEM)
    first, second = base.history(conversation).user("one").build(), base.history(conversation).user("two").build()
    conversation.record(first, "reply")
    with pytest.raises(PromptError, match="the prompt was not built from this conversation as it is now"):
        conversation.record(second, "reply")
    with pytest.raises(PromptError):
        Conversation().record(first, "reply")
    assert [m.text for m in conversation] == ["one", "reply"]


def test_replies_from_sdk_response_objects() -> None:
    a = anthropic.types.Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "track", "input": {"parcel": 7}}]})
    o = openai.types.chat.ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1", "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "track", "arguments": '{"parcel":7}'}}]}}]})
    r = openai.types.responses.Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4.1", "status": "completed",
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_r", "name": "track", "arguments": '{"parcel":7}'}]})
    for reply, call_id in ((a, "toolu_1"), (o, "call_1"), (r, "call_r")):
        conversation = Conversation([{"role": "user", "content": "Where is parcel 7?"}])
        conversation.add_assistant(reply)
        assert [c.id for c in conversation[-1].tool_calls] == [call_id]
        assert conversation[-1].tool_calls[0].input == {"parcel": 7}
        conversation.append({"role": "tool", "tool_call_id": call_id, "content": "delivered"})
        assert conversation[-1].tool_results[0].content == "delivered"
