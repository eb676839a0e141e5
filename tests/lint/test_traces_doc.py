"""docs/traces.md's redaction hook, run as documented on the trace lines of real SDK requests.

The hook is taken from the doc itself (the Python block that defines ``redact``), so the doc cannot
drift from what is tested. Requests go through ``promptcache.wrap`` around the real ``anthropic`` and
``openai`` clients on an ``httpx2.MockTransport`` (the HTTP package these SDK versions use).
"""

from __future__ import annotations

import copy
import json
import re

import anthropic
import httpx2
import openai
import pytest

import promptcache
from lint_support import ANTHROPIC_REPLY, CHAT_REPLY, REPO_ROOT
from promptcache import Conversation, PromptBuilder
from promptcache.trace.records import read_trace
from promptcache.trace import validate_trace

DOC = REPO_ROOT / "docs" / "traces.md"
KEY = "sk-test-secret-key-123"
RULES = "You are the support desk of Parcelly. Answer in two sentences."
QUESTION = "Please mail the label to bob@example.com today."


def documented_hook():
    """``redact`` as defined by the doc's code block (the block holding ``def redact``, run on its own)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    source = next(b for b in blocks if "def redact(" in b)
    assert "wrap(" not in source, "keep the hook's block free of client code, so it runs here as written"
    namespace: dict = {}
    exec(compile(source, str(DOC), "exec"), namespace)  # noqa: S102 - the documented example itself
    return namespace["redact"]


def recorded_line(tmp_path, provider: str) -> tuple[bytes, str]:
    """Send one prompt with the documented hook; (the body that went on the wire, the trace file's text)."""
    sent: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, json=ANTHROPIC_REPLY if provider == "anthropic" else CHAT_REPLY)

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    raw = (anthropic.Anthropic(api_key=KEY, http_client=http, max_retries=0) if provider == "anthropic"
           else openai.OpenAI(api_key=KEY, http_client=http, max_retries=0))
    trace = tmp_path / f"{provider}.jsonl"
    client = promptcache.wrap(raw, trace=trace, redact=documented_hook())
    history = Conversation([{"role": "user", "content": "I am carol@example.org."}, {"role": "assistant", "content": "Hi Carol."}])
    prompt = PromptBuilder().system(RULES).history(history).user(QUESTION, context={"account": "dan@example.net"}).build()
    client.send(prompt, model="claude-sonnet-4-6" if provider == "anthropic" else "gpt-4.1-mini")
    assert len(sent) == 1
    return sent[0].content, trace.read_text(encoding="utf-8")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_documented_hook_redacts_both_apis(tmp_path, provider):
    wire, text = recorded_line(tmp_path, provider)
    for address in (b"bob@example.com", b"carol@example.org", b"dan@example.net"):
        assert address in wire  # what was sent is untouched
        assert address.decode() not in text  # the trace line is redacted
    assert "<email>" in text
    [record] = read_trace(tmp_path / f"{provider}.jsonl")
    assert record.api == ("anthropic.messages" if provider == "anthropic" else "openai.chat")
    sent = json.loads(wire)
    assert list(record.body) == list(sent)  # keys kept where the SDK put them
    assert [list(m) for m in record.body["messages"]] == [list(m) for m in sent["messages"]]
    assert validate_trace(tmp_path / f"{provider}.jsonl") == []


def test_the_openai_user_message_is_a_string_on_the_wire(tmp_path):
    """Why the hook must read strings: the OpenAI SDK sends user content as one string."""
    wire, _ = recorded_line(tmp_path, "openai")
    user = json.loads(wire)["messages"][-1]
    assert user["role"] == "user" and isinstance(user["content"], str) and "bob@example.com" in user["content"]


def test_the_documented_hook_reads_every_content_shape():
    """Strings, text blocks / parts, Anthropic tool results (string or blocks) and a top-level system; no key added."""
    redact = documented_hook()
    body = {
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "a@x.io"},
            {"role": "assistant", "content": [{"type": "text", "text": "b@x.io"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "c@x.io"},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "d@x.io"}]},
                {"type": "tool_result", "tool_use_id": "t3"},
                {"type": "image_url", "image_url": {"url": "https://x.io/e@x.io.png"}},
            ]},
            {"role": "assistant", "content": None, "tool_calls": []},
        ],
        "model": "m",
        "system": [{"type": "text", "text": "Escalate to f@x.io."}],
    }
    before = copy.deepcopy(body)
    out = redact(body)
    flat = json.dumps(out)
    assert [a for a in "abcdf" if f"{a}@x.io" in flat] == []
    assert "e@x.io" in flat  # not text: left alone
    assert out["messages"][2]["content"][2] == {"type": "tool_result", "tool_use_id": "t3"}  # no key added
    assert shape(out) == shape(before)  # same keys, same order, everywhere


def shape(value):
    """The key structure of a JSON value (dict keys in order, list lengths), without the strings."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__
