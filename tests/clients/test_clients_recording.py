"""Client wrappers, what they remember and record: the guard's reference requests, thinking replies, traces
appended across runs. Real SDK clients through httpx2.MockTransport."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

import promptcache
from promptcache import PrefixStabilityError, PromptBuilder
from promptcache.prompt.stability import LayerRegistry
from promptcache.trace.records import TraceRecord, read_trace
from promptcache.trace import validate_trace
from promptcache.trace.recorder import TraceClock, last_t

KEY = "sk-test-secret-key-123"
RULES = " ".join(f"Rule {i}: be precise." for i in range(300))
MODEL = "claude-sonnet-4-6"


def message(content: list[dict], n: int = 0) -> dict:
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": MODEL, "stop_reason": "end_turn",
            "stop_sequence": None, "content": content, "usage": {"input_tokens": 3, "output_tokens": 1}}


def anthropic_client(reply, **options):
    """A wrapped anthropic.Anthropic whose transport answers ``reply(request_number)`` (a dict or a status code)."""
    sent: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        answer = reply(len(sent) - 1)
        if isinstance(answer, int):
            return httpx2.Response(answer, json={"type": "error", "error": {"type": "api_error", "message": "boom"}})
        return httpx2.Response(200, json=answer)

    raw = anthropic.Anthropic(api_key=KEY, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
                              max_retries=0)
    return promptcache.wrap(raw, **options), sent


def prompt(system: str, question: str = "hello"):
    return PromptBuilder(registry=LayerRegistry()).system(system).user(question).build()


def test_a_refused_request_stays_refused_when_retried() -> None:
    """/tmp/rev/guard_retry.py: the refused body must not become the reference of the retry."""
    client, sent = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), guard="raise")
    client.send(prompt(RULES), model=MODEL)
    edited = prompt("Edited. " + RULES)
    for _ in range(2):
        with pytest.raises(PrefixStabilityError, match="system_changed"):
            client.send(edited, model=MODEL)
    assert len(sent) == 1
    client.send(prompt(RULES, "hello again"), model=MODEL)  # a sent request is remembered: an appended turn is fine
    assert len(sent) == 2 and client.last_divergence.cause == "new_turn"


def test_the_guard_knows_each_request_s_session_so_other_prompts_and_models_are_not_breaks() -> None:
    """A router on one model beside an answerer on another, or a second template, in other sessions: first
    requests of their own prefix, not breaks; an edit at the top of the shared prompt in another session still is."""
    client, sent = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), guard="raise")
    client.send(prompt(RULES), model=MODEL, session="answer-1")
    router = " ".join(f"Route {i}: pick one label." for i in range(200))
    client.send(prompt(router), model="claude-haiku-4-5", session="route-1")
    assert client.last_divergence.cause == "first_request"
    billing = " ".join(f"Billing {i}: quote the invoice." for i in range(300))
    client.send(prompt(billing), model=MODEL, session="billing-1")
    assert client.last_divergence.cause == "first_request" and "different prompt" in client.last_divergence.detail
    with pytest.raises(PrefixStabilityError, match="system_changed"):
        client.send(prompt("Customer: Ada. " + RULES), model=MODEL, session="answer-2")
    assert len(sent) == 3


def test_a_failed_call_is_not_a_reference() -> None:
    """A request the provider answered with an error never reached its cache: nothing to diverge from."""
    client, sent = anthropic_client(lambda n: 500 if n == 0 else message([{"type": "text", "text": "ok"}], n),
                                    guard="raise")
    with pytest.raises(anthropic.InternalServerError):
        client.send(prompt(RULES), model=MODEL)
    client.send(prompt("Edited. " + RULES), model=MODEL)
    assert len(sent) == 2 and client.last_divergence.cause == "first_request"


THINKING = {"type": "thinking", "thinking": "The parcel id is P-7; look it up.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}
TRACK = {"name": "track_parcel", "description": "Track a parcel.",
         "input_schema": {"type": "object", "properties": {"parcel": {"type": "string"}}, "required": ["parcel"]}}


def test_thinking_blocks_go_back_verbatim_in_a_tool_loop() -> None:
    """/tmp/rev/think.py: a reply with thinking blocks no longer fails after the (billed) call."""
    call = {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "track_parcel", "input": {"parcel": "P-7"}}
    replies = [message([THINKING, REDACTED, call], 0), message([{"type": "text", "text": "It arrives Friday."}], 1)]
    client, sent = anthropic_client(lambda n: replies[n], guard="raise")
    chat = promptcache.Conversation()
    base = PromptBuilder(registry=LayerRegistry()).system(RULES).tools([TRACK])
    thinking = {"type": "enabled", "budget_tokens": 1024}
    client.send(base.history(chat).user("Where is P-7?").build(), model=MODEL, thinking=thinking, max_tokens=2000)
    assert [type(b).__name__ for b in chat[-1].blocks] == ["Thinking", "Thinking", "ToolCall"]
    follow_up = base.history(chat).tool_result(call["id"], {"status": "in transit"}).build()
    client.send(follow_up, model=MODEL, thinking=thinking, max_tokens=2000)
    body = json.loads(sent[1].content)
    assert body["messages"][1] == {"role": "assistant", "content": [THINKING, REDACTED, call]}  # key order too
    assert list(body["messages"][1]["content"][0]) == ["type", "thinking", "signature"]
    chat_body = follow_up.to_openai_chat("gpt-4.1-mini")  # no OpenAI counterpart: left out there
    assert "thinking" not in json.dumps(chat_body["messages"])
    assert follow_up.count_tokens() == len(follow_up.to_tokens())
    with pytest.raises(promptcache.PromptError, match=r"reply.content\[0\]: a thinking block needs a string "
                                                      r"'thinking' and 'signature'"):
        chat.add_assistant({"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]})


def test_the_guard_error_names_the_place_and_the_fix_once() -> None:
    client, _ = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), guard="raise")
    client.send(prompt(RULES), model=MODEL)
    with pytest.raises(PrefixStabilityError) as raised:
        client.send(prompt("Edited. " + RULES), model=MODEL)
    d = raised.value.divergence
    assert d.hint == "keep the system prompt byte-identical; move per-request facts into the newest user turn"
    assert str(raised.value) == (
        f"system layer (system[0].text): system_changed (token {d.token_offset:,} of {d.prompt_tokens:,}; "
        f"{d.common_prefix_tokens:,} shared with earlier request index 0): system[0].text differs. Fix: {d.hint}")
    assert raised.value.fix == d.hint and "->" not in str(raised.value)


def test_a_paid_response_is_returned_when_recording_fails(tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    client, sent = anthropic_client(lambda n: message([{"type": "text", "text": f"Answer {n}."}], n), trace=trace)
    trace.mkdir()  # a folder where the trace file should be (after the wrap-time check): the line cannot be written
    chat = promptcache.Conversation()
    p = PromptBuilder(registry=LayerRegistry()).system(RULES).history(chat).user("Hi").build()
    with pytest.warns(promptcache.RecordingWarning, match=r"writing the trace line failed: IsADirectoryError"):
        response = client.send(p, model=MODEL)
    assert response.content[0].text == "Answer 0." and len(chat) == 2  # the other steps still ran
    assert client.stats.summary()["total"]["requests"] == 1
    with pytest.warns(promptcache.RecordingWarning) as caught:
        again = client.send(p, model=MODEL)  # a stale prompt: the conversation refuses it, the reply comes back
    assert again.content[0].text == "Answer 1." and len(sent) == 2 and len(chat) == 2
    assert "appending the turn and the reply to the conversation failed: PromptError: record: the prompt was not " \
           "built from this conversation" in str(caught[-1].message)


def test_appending_to_an_existing_trace_continues_its_t(tmp_path, traces_dir) -> None:
    """A second run appending to a trace must keep t increasing (the validator rejects a restart at 0)."""
    trace = tmp_path / "support.jsonl"
    trace.write_bytes((traces_dir / "good_support_chat.jsonl").read_bytes())  # last t = 340.8
    idle = 100.0
    os.utime(trace, (time.time() - idle, time.time() - idle))  # last written 100 s ago
    for run in range(2):  # two runs (wrappers) of the app, one after the other
        client, _ = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), trace=trace)
        for n in range(2):
            client.send(prompt(RULES, f"run {run} question {n}"), model=MODEL, session=f"run-{run}")
    records = read_trace(trace, strict=True)
    added = [r.t for r in records[17:]]
    assert len(added) == 4 and 340.8 + idle <= added[0] < 340.8 + idle + 30
    assert added == sorted(set(added)) and validate_trace(trace) == []


def test_trace_clock_stamps_from_zero_and_never_backwards(tmp_path) -> None:
    now = [50.0]
    clock = TraceClock(tmp_path / "t.jsonl", lambda: now[0])
    body = {"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "model": MODEL}
    make = lambda t: TraceRecord(t, "anthropic.messages", "s", body)  # noqa: E731
    first = clock.now()
    now[0] = 62.5
    second = clock.now()
    assert clock.append(second, make) == 0.0  # the first record written starts the trace ...
    assert clock.append(first, make) == 0.001  # ... and a request that finishes later never goes back
    assert last_t(tmp_path / "t.jsonl") == 0.001


def test_a_trace_path_that_cannot_be_written_is_refused_at_wrap_time(tmp_path) -> None:
    raw = anthropic.Anthropic(api_key=KEY)
    missing = tmp_path / "no" / "such" / "dir" / "t.jsonl"
    with pytest.raises(FileNotFoundError, match=rf"the folder {tmp_path / 'no' / 'such' / 'dir'} does not exist; "
                                                 "create it first"):
        promptcache.wrap(raw, trace=missing)
    assert not (tmp_path / "no").exists()  # nothing created silently
    with pytest.raises(IsADirectoryError, match="is a folder; pass a file path inside it"):
        promptcache.wrap(raw, trace=tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        promptcache.wrap(raw, trace=tmp_path / "file" / "t.jsonl")
    assert promptcache.wrap(raw, trace=tmp_path / "new.jsonl").trace == tmp_path / "new.jsonl"
    assert not (tmp_path / "new.jsonl").exists()  # created by the first request, not by wrap()


def test_the_guard_cap_is_an_option_of_wrap() -> None:
    client, _ = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), guard_max_requests=2)
    for n in range(4):
        client.send(prompt(RULES, f"question {n}"), model=MODEL)
    assert len(client.guard.renderings) == 2 and client.guard.index.max_entries == 2
    assert anthropic_client(lambda n: {})[0].guard.index.max_entries == 256
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="guard_max_requests must be a whole number >= 1"):
            anthropic_client(lambda n: {}, guard_max_requests=bad)


def test_a_trace_path_with_a_tilde_is_in_the_home_folder(tmp_path, monkeypatch) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    client, _ = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), trace="~/t.jsonl")
    assert client.trace == str(home / "t.jsonl")
    client.send(prompt(RULES), model=MODEL)
    assert [r.session for r in read_trace(home / "t.jsonl", strict=True)] == ["default"]
    assert list(work.iterdir()) == []  # no folder named '~' in the working directory
    path_client, _ = anthropic_client(lambda n: {}, trace=Path("~/p.jsonl"))
    assert path_client.trace == home / "p.jsonl"
    assert TraceClock("~/c.jsonl").path == str(home / "c.jsonl")


def raw_clients(status: int, content: bytes, content_type: str) -> list:
    """A wrapped anthropic.Anthropic and openai.OpenAI whose transport answers every request with these bytes."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, content=content, headers={"content-type": content_type})

    http = lambda: httpx2.Client(transport=httpx2.MockTransport(handler))  # noqa: E731
    return [(anthropic, anthropic.Anthropic(api_key=KEY, http_client=http(), max_retries=0), MODEL),
            (openai, openai.OpenAI(api_key=KEY, http_client=http(), max_retries=0), "gpt-4.1-mini")]


@pytest.mark.parametrize(("content", "content_type", "problem"), [
    (b"not json", "application/json", r"the body is not JSON \(Expecting value: line 1 column 1 \(char 0\)\): "
                                      r"'not json'"),
    (b"<html>Bad gateway</html>", "text/html", r"the body is not a (message|chat completion) \(it needs usage and "
                                               r"(content|choices)\): '<html>Bad gateway</html>'"),
    (b"[1, 2]", "application/json", r"the body is not a .*: '\[1, 2\]'"),
    (b"{}", "application/json", r"the body is not a .*: '\{\}'"),
])
def test_a_response_that_cannot_be_read_is_the_sdks_api_error_and_nothing_is_recorded(content, content_type, problem,
                                                                                        tmp_path) -> None:
    for sdk, raw, model in raw_clients(200, content, content_type):
        trace = tmp_path / f"{sdk.__name__}.jsonl"
        client = promptcache.wrap(raw, trace=trace)
        with pytest.raises(sdk.APIResponseValidationError, match=f"^{problem}$") as info:
            client.send(prompt(RULES), model=model)
        assert isinstance(info.value, sdk.APIError) and info.value.status_code == 200
        assert isinstance(info.value.__cause__, json.JSONDecodeError) == (content == b"not json")
        assert not trace.exists() and client.stats.summary()["total"]["requests"] == 0


def test_a_trace_removed_and_made_anew_in_one_process_starts_at_zero(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    body = {"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "model": MODEL}
    make = lambda t: TraceRecord(t, "anthropic.messages", "s", body)  # noqa: E731
    first = TraceClock(path, lambda: 40.0)
    assert [first.append(40.0, make), first.append(52.5, make)] == [0.0, 12.5]
    path.unlink()
    assert TraceClock(path, lambda: 90.0).append(90.0, make) == 0.0  # not 12.501: the old file is gone
    assert TraceClock(path, lambda: 3.0).append(3.0, make) > 0.0  # an existing file is still continued


def test_the_async_wrapper_raises_the_same_error_for_a_body_that_is_not_json() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=b"nope", headers={"content-type": "application/json"})

    raw = anthropic.AsyncAnthropic(api_key=KEY, max_retries=0,
                                   http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    with pytest.raises(anthropic.APIResponseValidationError, match=r"^the body is not JSON \(Expecting value: "
                                                                   r"line 1 column 1 \(char 0\)\): 'nope'$"):
        asyncio.run(promptcache.wrap(raw).send(prompt(RULES), model=MODEL))


def test_a_conversation_compaction_recorded_in_a_trace_is_expected(tmp_path: Path) -> None:
    """Conversation(compactor=...): the dropped part summarised into one head message is no history rewrite."""
    from promptcache import Conversation
    from promptcache.misses.guard import classify_requests

    path = tmp_path / "trace.jsonl"
    client, sent = anthropic_client(lambda n: message([{"type": "text", "text": f"Answer {n}. " * 20}], n),
                                    guard="raise", trace=path, session="c-1")
    chat = Conversation(budget_tokens=2_500, compactor=lambda dropped, previous: f"Summary of {len(dropped)}.")
    base = PromptBuilder(registry=LayerRegistry()).system(RULES)
    for n in range(30):  # guard="raise": a compaction reported as unexpected would raise here
        client.send(base.history(chat).user(f"Question {n}: " + "tell me more about the parcel. " * 12).build(),
                    model=MODEL)
    assert chat.truncations >= 2 and len(sent) == 30
    divergences = classify_requests(read_trace(path))
    compactions = [d for d in divergences if d.cause == "history_rewritten"]
    assert len(compactions) >= 2  # every compaction the requests show (the last one may follow the last reply)
    assert all(d.expected and d.hint == "" for d in compactions)
    assert all(d.detail.startswith("compacted: ") and d.detail.endswith(" messages summarised into one head message")
               for d in compactions)


def test_two_templates_through_one_client_are_no_break() -> None:
    """The default session carries both templates: the second template's first request is another prompt."""
    client, sent = anthropic_client(lambda n: message([{"type": "text", "text": "ok"}], n), guard="raise")
    client.send(prompt(RULES), model=MODEL)
    client.send(prompt(" ".join(f"Step {i}: summarise the ticket." for i in range(300))), model=MODEL)
    assert len(sent) == 2 and client.guard.last.cause == "first_request"
    assert client.guard.last.detail.startswith("a different prompt: shares")
    with pytest.raises(PrefixStabilityError, match="system_changed"):  # the first template edited: still a break
        client.send(prompt(RULES.replace("Rule 7: be precise.", "Rule 7: be exact.")), model=MODEL)
