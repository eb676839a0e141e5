"""The runtime guard of a wrapped client reads the Prompt's own layers, for Anthropic and OpenAI alike, and a
send tokenises each part of the prompt once (real SDK clients through httpx2.MockTransport)."""

from __future__ import annotations

import collections
import uuid
import warnings

import anthropic
import httpx2
import openai
import pytest

import promptcache
from promptcache import Conversation, PromptBuilder
from promptcache.errors import PrefixStabilityWarning
from promptcache.misses.rendering import decompose
from promptcache.prompt.stability import LayerRegistry
from promptcache.tokens import chatml

HANDBOOK = " ".join(f"Rule {i}: refunds of order {i} take five working days." for i in range(300))


def reply(request: httpx2.Request) -> httpx2.Response:
    if request.url.path.endswith("/messages"):
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "stop_reason": "end_turn",
            "stop_sequence": None, "content": [{"type": "text", "text": "Noted."}],
            "usage": {"input_tokens": 3, "output_tokens": 1}})
    return httpx2.Response(200, json={
        "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Noted."}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})


def wrapped(provider: str):
    http = httpx2.Client(transport=httpx2.MockTransport(reply))
    if provider == "anthropic":
        return promptcache.wrap(anthropic.Anthropic(api_key="k", http_client=http, max_retries=0)), "claude-sonnet-4-6"
    return promptcache.wrap(openai.OpenAI(api_key="k", http_client=http, max_retries=0)), "gpt-4.1"


def base(handbook: str) -> PromptBuilder:
    return (PromptBuilder(registry=LayerRegistry()).system("You are the support agent of Harbor.")
            .document(handbook, name="handbook").example("Where is my parcel?", "Let me look it up."))


@pytest.mark.parametrize(("provider", "path"), [("anthropic", "system[1].text"), ("openai", "messages[0].content")])
def test_an_edited_document_is_the_documents_layer_for_both_providers(provider, path):
    """Issue 10: the same edit was layer documents at system[1].text for Anthropic but layer system for OpenAI,
    whose system message holds the system, documents and examples sections in one string."""
    client, model = wrapped(provider)
    client.send(base(HANDBOOK).user("Hi").build(), model=model)
    with pytest.warns(PrefixStabilityWarning, match=r"^document_changed in documents at "):
        client.send(base(HANDBOOK.replace("Rule 150", "Rule 150b")).user("Hi").build(), model=model)
    divergence = client.last_divergence
    assert (divergence.cause, divergence.layer, divergence.path) == ("document_changed", "documents", path)


def test_the_openai_system_message_is_cut_at_its_sections():
    prompt = base(HANDBOOK).user("Hi").build()
    body = prompt.to_openai_chat("gpt-4.1")
    rendering = decompose(body, "openai.chat", layers=prompt.layer_hints("openai.chat"))
    runs = {layer: b"".join(rendering.data[p.start:p.end] for p in rendering.pieces if p.layer == layer and not p.framing)
            for layer in ("system", "documents", "examples", "turn")}
    assert runs["system"] == b"You are the support agent of Harbor."
    assert runs["documents"].startswith(b'\n\n<document name="handbook">') and runs["documents"].endswith(b"</document>")
    assert runs["examples"].startswith(b"\n\n<examples>") and runs["turn"] == b"Hi"
    assert rendering.message_keys and len(rendering.message_keys) == 1  # the system message is no conversation message


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_wrapped_send_tokenises_each_part_of_the_prompt_once(provider, monkeypatch):
    """No text reaches the tokenizer twice in a send (the breakpoint planner's counts and the guard's rendering
    share one per-message memo), and the next turn on the same base tokenises only the new messages."""
    encoding = chatml.chatml_encoding()
    seen: list[str] = []
    real = encoding.encode
    monkeypatch.setattr(encoding, "encode", lambda text, **kw: seen.append(text) or real(text, **kw))
    fresh = uuid.uuid4().hex  # texts no earlier test has tokenised
    client, model = wrapped(provider)
    chat = Conversation()
    prompt = base(f"{fresh} {HANDBOOK}").history(chat).user(f"First question {fresh}").build()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrefixStabilityWarning)
        client.send(prompt, model=model)
        first = [text for text in seen if text != "\n"]
        assert first and max(collections.Counter(first).values()) == 1, collections.Counter(first).most_common(3)
        assert sum(fresh in text for text in first) >= 2  # the handbook and the turn were tokenised, each once
        # ...and no overlapping prefix of it either: the planner's count after each layer comes from one
        # tokenisation of the whole system text (Anthropic tokenised system+documents again: 32.8k chars).
        assert sum(len(text) for text in first) < 1.1 * len(HANDBOOK)
        seen.clear()
        client.send(base(f"{fresh} {HANDBOOK}").history(chat).user(f"Second question {fresh}").build(), model=model)
    again = [text for text in seen if text != "\n"]
    assert len(again) == len(set(again)) and all(HANDBOOK[:40] not in text for text in again)
    assert any(text.endswith(f"Second question {fresh}") for text in again)
