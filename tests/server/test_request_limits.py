"""``max_tokens`` against the context (vLLM's rule: prompt + max_tokens <= max_model_len), in process."""

from __future__ import annotations

import anthropic
import openai
import pytest
from fastapi.testclient import TestClient
from server_support import tiny_llama

from local_backend import LocalEngine
from local_backend.server import create_app
from local_backend.tokenizer import ChatMLTokenizer

CONTEXT = 64


@pytest.fixture(scope="module")
def client():
    engine = LocalEngine(tiny_llama(), tokenizer=ChatMLTokenizer(), num_blocks=64, max_model_len=CONTEXT)
    with TestClient(create_app(engine, default_max_tokens=4)) as test_client:
        yield test_client


def test_max_tokens_beyond_the_context_is_a_400_naming_the_numbers(client):
    sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="x", http_client=client, max_retries=0)
    messages = [{"role": "user", "content": "hi"}]
    prompt = len(client.post("/tokenize", json={"messages": messages}).json()["tokens"])
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="m", messages=messages, max_tokens=10**12)
    assert caught.value.body["param"] == "max_tokens"
    assert caught.value.body["message"].startswith(
        f"'max_tokens' is too large: {10**12}. This model's maximum context length is {CONTEXT} tokens and your "
        f"request has {prompt} input tokens ({10**12} > {CONTEXT} - {prompt}). Lower max_tokens to at most "
        f"{CONTEXT - prompt}")
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(model="m", messages=messages, max_completion_tokens=CONTEXT - prompt + 1)
    assert caught.value.body["param"] == "max_completion_tokens"
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.completions.create(model="m", prompt=[5] * (CONTEXT - 3), max_tokens=4)
    assert "(4 > 64 - 61)" in caught.value.body["message"]
    fits = sdk.completions.create(model="m", prompt=[5] * (CONTEXT - 3), max_tokens=3)
    assert fits.usage.completion_tokens == 3  # the tiny model has no end-of-sequence token

    claude = anthropic.Anthropic(base_url="http://testserver", api_key="x", http_client=client, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model="m", max_tokens=CONTEXT, messages=messages)
    assert caught.value.body["error"]["message"].startswith(f"'max_tokens' is too large: {CONTEXT}.")


def test_the_default_max_tokens_is_capped_to_the_room_left(client):
    one_left = client.post("/v1/completions", json={"model": "m", "prompt": [5] * (CONTEXT - 1)})
    assert one_left.status_code == 200 and one_left.json()["usage"]["completion_tokens"] == 1
    assert client.post("/v1/completions", json={"model": "m", "prompt": [5] * 10}).json()["usage"][
        "completion_tokens"] == 4
    full = client.post("/v1/completions", json={"model": "m", "prompt": [5] * CONTEXT})
    assert full.status_code == 400 and full.json()["error"]["code"] == "context_length_exceeded"
    assert "leaves no room for output" in full.json()["error"]["message"]
    over = client.post("/v1/completions", json={"model": "m", "prompt": [5] * (CONTEXT + 1), "max_tokens": 1})
    assert over.status_code == 400 and over.json()["error"]["code"] == "context_length_exceeded"
