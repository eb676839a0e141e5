"""Bad input in a row against one server: each gets the provider-shaped error (or a clean cancel), and the
next request is served."""

from __future__ import annotations

import time

import anthropic
import httpx
import openai
import pytest
from server_support import MAX_MODEL_LEN, metric, metrics, unique_system

OPENAI_KEYS = {"message", "type", "param", "code"}


def served(openai_client, anthropic_client) -> None:
    """A good request of each API right after the bad one: the server kept serving."""
    chat = openai_client.chat.completions.create(model="gpt-4.1-mini", max_tokens=1,
                                                 messages=[{"role": "user", "content": "still there?"}])
    assert chat.usage.prompt_tokens > 0
    message = anthropic_client.messages.create(model="claude-sonnet-4-6", max_tokens=1,
                                               messages=[{"role": "user", "content": "still there?"}])
    assert message.usage.output_tokens == 1


ABORT_DEADLINE_S = 120.0
"""How long to poll /metrics for an abort: generous, since the machine may be loaded; a pass returns at once."""


def wait_for_abort(server: str, aborted_before: float, count: int = 1) -> dict[str, float]:
    """Poll /metrics until the engine has aborted ``count`` more requests and none is running or waiting;
    returns that /metrics sample."""
    deadline = time.monotonic() + ABORT_DEADLINE_S
    while True:
        now = metrics(server)
        aborted = metric(now, "promptcache_requests_aborted_total")
        running, waiting = metric(now, "promptcache_requests_running"), metric(now, "promptcache_requests_waiting")
        if aborted >= aborted_before + count and running == waiting == 0:
            return now
        if time.monotonic() > deadline:
            pytest.fail(f"the engine did not abort the requests of the clients that went away within "
                        f"{ABORT_DEADLINE_S:.0f} s: aborted {aborted} (expected {aborted_before + count}), "
                        f"running {running}, waiting {waiting}")
        time.sleep(0.2)


def test_bad_requests_in_a_row(server, openai_client, anthropic_client):
    # 1. Malformed JSON.
    broken = b'{"model": "gpt-4.1-mini", "messages": ['
    response = httpx.post(f"{server}/v1/chat/completions", content=broken,
                          headers={"content-type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == OPENAI_KEYS and error["type"] == "invalid_request_error"
    assert "could not parse the JSON body" in error["message"]
    response = httpx.post(f"{server}/v1/messages", content=broken, headers={"content-type": "application/json"})
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    served(openai_client, anthropic_client)

    # 2. No messages.
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.post("/chat/completions", body={"model": "gpt-4.1-mini"}, cast_to=httpx.Response)
    assert caught.value.body["param"] == "messages" and "messages" in caught.value.body["message"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.post("/v1/messages", body={"model": "claude-sonnet-4-6", "max_tokens": 1},
                              cast_to=httpx.Response)
    assert caught.value.body == {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": "messages: Field required"}}
    served(openai_client, anthropic_client)

    # 3. Wrong role order: a tool result that answers no call.
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-4.1-mini", max_tokens=1, messages=[
            {"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "{}"}])
    assert caught.value.body["param"] == "messages[1]" and "role 'tool'" in caught.value.body["message"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(model="claude-sonnet-4-6", max_tokens=1, messages=[
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "{}"}]}])
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert "corresponding `tool_use` block" in caught.value.body["error"]["message"]
    served(openai_client, anthropic_client)

    # 4. A prompt longer than the context (--max-model-len).
    long_text = "order " * (MAX_MODEL_LEN + 100)
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-4.1-mini", max_tokens=1,
                                              messages=[{"role": "user", "content": long_text}])
    assert caught.value.body["code"] == "context_length_exceeded"
    assert f"({MAX_MODEL_LEN} tokens)" in caught.value.body["message"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(model="claude-sonnet-4-6", max_tokens=1,
                                         messages=[{"role": "user", "content": long_text}])
    assert "longer than" in caught.value.body["error"]["message"]
    served(openai_client, anthropic_client)

    # 4b. max_tokens beyond what the context leaves after the prompt (vLLM's 400).
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-4.1-mini", max_tokens=10**12,
                                              messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["param"] == "max_tokens"
    assert caught.value.body["message"].startswith(f"'max_tokens' is too large: {10**12}. This model's maximum "
                                                   f"context length is {MAX_MODEL_LEN} tokens")
    served(openai_client, anthropic_client)

    # 5. A model name the server does not serve (--served-model-name).
    with pytest.raises(openai.NotFoundError) as caught:
        openai_client.chat.completions.create(model="gpt-5-unknown", max_tokens=1,
                                              messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["code"] == "model_not_found" and "gpt-5-unknown" in caught.value.body["message"]
    with pytest.raises(anthropic.NotFoundError) as caught:
        anthropic_client.messages.create(model="claude-unknown", max_tokens=1,
                                         messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["error"]["type"] == "not_found_error"
    served(openai_client, anthropic_client)

    # 6. A client that disconnects mid-stream: the engine request is aborted, its blocks freed.
    aborted = metric(metrics(server), "promptcache_requests_aborted_total")
    body = {"model": "gpt-4.1-mini", "max_tokens": MAX_MODEL_LEN - 200, "stream": True, "ignore_eos": True,
            "messages": [{"role": "user", "content": unique_system(40)}]}
    with httpx.stream("POST", f"{server}/v1/chat/completions", json=body, timeout=60) as response:
        assert response.status_code == 200
        first = next(response.iter_lines())
        assert first.startswith("data: ")
    wait_for_abort(server, aborted)
    served(openai_client, anthropic_client)

    # 7. A non-streaming client that times out while its prompt is computed: aborted at the next step.
    aborted = metric(metrics(server), "promptcache_requests_aborted_total")
    body = {"model": "gpt-4.1-mini", "max_tokens": MAX_MODEL_LEN // 2, "ignore_eos": True,
            "messages": [{"role": "user", "content": unique_system(MAX_MODEL_LEN // 3)}]}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server}/v1/chat/completions", json=body, timeout=httpx.Timeout(60, read=0.3))
    wait_for_abort(server, aborted)
    served(openai_client, anthropic_client)

    # 8. A non-streaming client that times out while tokens flow, retried twice by the openai client: each
    #    attempt is aborted at the next disconnect check (a clock, not only when no token arrives).
    before = metrics(server)
    impatient = openai.OpenAI(base_url=f"{server}/v1", api_key="test-key", max_retries=2, timeout=1.5)
    with pytest.raises(openai.APITimeoutError):
        impatient.chat.completions.create(model="gpt-4.1-mini", max_tokens=MAX_MODEL_LEN - 200,
                                          messages=[{"role": "user", "content": unique_system(20)}],
                                          extra_body={"ignore_eos": True})
    after = wait_for_abort(server, metric(before, "promptcache_requests_aborted_total"), count=3)
    ttft = "promptcache_time_to_first_token_seconds_count"
    assert metric(after, ttft) - metric(before, ttft) == 3  # each attempt got its first token: aborted mid-decode
    assert metric(after, "promptcache_requests_finished_total") == metric(before, "promptcache_requests_finished_total")
    before = after
    impatient = anthropic.Anthropic(base_url=server, api_key="test-key", max_retries=0, timeout=1.5)
    with pytest.raises(anthropic.APITimeoutError):
        impatient.messages.create(model="claude-sonnet-4-6", max_tokens=MAX_MODEL_LEN - 200,
                                  messages=[{"role": "user", "content": unique_system(20)}],
                                  extra_body={"ignore_eos": True})
    after = wait_for_abort(server, metric(before, "promptcache_requests_aborted_total"))
    assert metric(after, ttft) - metric(before, ttft) == 1
    served(openai_client, anthropic_client)
    assert httpx.get(f"{server}/health").json()["status"] == "ok"
