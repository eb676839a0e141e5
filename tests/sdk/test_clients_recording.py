"""Client wrappers, what they remember and record: the guard's reference requests, thinking replies, traces
appended across runs. Real SDK clients through httpx2.MockTransport."""

from __future__ import annotations

import anthropic
import httpx2
import pytest

import promptcache
from promptcache import PrefixStabilityError, PromptBuilder
from promptcache.stability import LayerRegistry

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


def test_a_failed_call_is_not_a_reference() -> None:
    """A request the provider answered with an error never reached its cache: nothing to diverge from."""
    client, sent = anthropic_client(lambda n: 500 if n == 0 else message([{"type": "text", "text": "ok"}], n),
                                    guard="raise")
    with pytest.raises(anthropic.InternalServerError):
        client.send(prompt(RULES), model=MODEL)
    client.send(prompt("Edited. " + RULES), model=MODEL)
    assert len(sent) == 2 and client.last_divergence.cause == "first_request"
