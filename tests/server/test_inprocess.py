"""The app in process (FastAPI's TestClient, an ``httpx.Client``) and the server's building blocks.

An unrestricted app (no ``served_model_names``) serves any model name with
the loaded model; the detokenizer holds back partial characters and stop
strings; the breakpoint offsets and the Anthropic usage mapping are exact.
"""

from __future__ import annotations

import functools
import json

import openai
import pytest
from fastapi.testclient import TestClient
from server_support import anthropic_expected, metric, parse_metrics, tiny_llama
from transformers import LlamaForCausalLM

from local_backend import LocalEngine
from local_backend.server import create_app
from local_backend.server.detokenizer import IncrementalDetokenizer
from local_backend.server.errors import ANTHROPIC, OPENAI, APIError
from local_backend.chat_template import anthropic_prompt, anthropic_usage, breakpoint_cuts
from local_backend.tokenizer import ChatMLTokenizer
from promptcache.tokens.chatml import encode_chatml
from promptcache.convert import anthropic_to_openai


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(LocalEngine(kv_cache_mb=16), default_max_tokens=2)) as test_client:
        yield test_client


def test_any_model_name_is_served_and_echoed(client):
    sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="x", http_client=client, max_retries=0)
    reply = sdk.chat.completions.create(model="my-app-model-v3", messages=[{"role": "user", "content": "hi"}])
    assert reply.model == "my-app-model-v3"
    assert reply.usage.completion_tokens == 2 or reply.choices[0].finish_reason == "stop"
    assert [m.id for m in sdk.models.list().data] == ["promptcache-embedded"]
    assert client.get("/health").json() == {"status": "ok", "model": "promptcache-embedded"}


def test_stop_strings_end_the_text_before_them(client):
    response = client.post("/v1/completions", json={"model": "m", "prompt": "count: one two", "max_tokens": 8,
                                                    "temperature": 0, "ignore_eos": True})
    full = response.json()["choices"][0]["text"]
    assert response.json()["usage"]["completion_tokens"] == 8
    cut = full[3:6]  # greedy decoding of the seeded embedded model: the same text every run
    assert cut.strip() and full.index(cut) == 3, f"pick another stop string from {full!r}"
    stopped = client.post("/v1/completions", json={"model": "m", "prompt": "count: one two", "max_tokens": 8,
                                                   "temperature": 0, "ignore_eos": True, "stop": [cut]}).json()
    assert stopped["choices"][0]["text"] == full[:full.index(cut)]
    assert stopped["choices"][0]["finish_reason"] == "stop"


def test_a_stop_string_finishes_the_request_and_metrics_match_the_usage(client):
    full = client.post("/v1/completions", json={"model": "m", "prompt": "count: one two", "max_tokens": 8,
                                                "temperature": 0, "ignore_eos": True}).json()["choices"][0]["text"]
    cut = full[3:6]
    before = parse_metrics(client.get("/metrics").text)
    stopped = client.post("/v1/completions", json={"model": "m", "prompt": "count: one two", "max_tokens": 8,
                                                   "temperature": 0, "ignore_eos": True, "stop": cut}).json()
    with client.stream("POST", "/v1/completions", json={
            "model": "m", "prompt": "count: one two", "max_tokens": 8, "temperature": 0, "ignore_eos": True,
            "stop": [cut], "stream": True, "stream_options": {"include_usage": True}}) as response:
        chunks = [json.loads(line[6:]) for line in response.iter_lines()
                  if line.startswith("data: {")]
    after = parse_metrics(client.get("/metrics").text)
    usages = [stopped["usage"], chunks[-1]["usage"]]
    assert stopped["choices"][0]["finish_reason"] == "stop" and usages[0]["completion_tokens"] < 8
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"

    def delta(name: str) -> float:
        return metric(after, name) - metric(before, name)

    assert delta("promptcache_requests_finished_total") == 2
    assert delta("promptcache_requests_aborted_total") == 0
    assert delta("promptcache_prompt_tokens_total") == sum(u["prompt_tokens"] for u in usages)
    assert delta("promptcache_cached_tokens_total") == sum(u["prompt_tokens_details"]["cached_tokens"]
                                                           for u in usages)
    assert delta("promptcache_generation_tokens_total") == sum(u["completion_tokens"] for u in usages)
    assert metric(after, "promptcache_requests_running") == 0


def test_unknown_route_and_bad_params_are_provider_shaped(client):
    missing = client.get("/v1/nothing-here")
    assert missing.status_code == 404 and set(missing.json()["error"]) == {"message", "type", "param", "code"}
    bad = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}],
                                                    "temperature": -1})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "temperature"
    several = client.post("/v1/chat/completions", json={"model": "m", "n": 2,
                                                        "messages": [{"role": "user", "content": "x"}]})
    assert several.status_code == 400 and several.json()["error"]["param"] == "n"
    no_max = client.post("/v1/messages", json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert no_max.json() == {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": "max_tokens: Field required"}}


def test_detokenizer_holds_back_partial_characters_and_stop_strings():
    tokenizer = ChatMLTokenizer()
    text = "Caf\u00e9 \U0001f600 ok. END of text"
    ids = tokenizer.encode(text)
    detok = IncrementalDetokenizer(tokenizer, stop=["END"])
    pieces = [detok.add([token]) for token in ids]
    assert all("\ufffd" not in piece for piece in pieces)
    assert "".join(pieces) + detok.flush() == "Caf\u00e9 \U0001f600 ok. "
    assert detok.stop_string == "END"
    plain = IncrementalDetokenizer(tokenizer)
    assert "".join(plain.add([token]) for token in ids) + plain.flush() == text


def test_breakpoint_offsets_are_the_tokens_up_to_each_marked_block():
    tokenizer = ChatMLTokenizer()
    marker = {"type": "ephemeral"}
    body = {"max_tokens": 5, "model": "m",
            "system": [{"type": "text", "text": "You are terse.", "cache_control": marker},
                       {"type": "text", "text": "Reference: the handbook."}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "First part."},
                {"type": "text", "text": "Second part.", "cache_control": marker}]}],
            "cache_control": marker}
    assert len(breakpoint_cuts(body)) == 3
    prompt = anthropic_prompt(tokenizer, body)
    chat = anthropic_to_openai(body).body["messages"]
    assert prompt.token_ids == encode_chatml(chat)
    full = len(encode_chatml(chat, add_generation_prompt=False))
    system_cut = len(encode_chatml([{"role": "system", "content": "You are terse."}], add_generation_prompt=False))
    # The system marker sits before the second system block, inside the one system message: the offset is the
    # common prefix with the cut rendering, i.e. the tokens up to the block's text (the cut's <|im_end|> differs).
    assert system_cut - 3 <= prompt.breakpoints[0] < system_cut
    assert prompt.breakpoints[1:] == (full, full)  # the last block's marker and the top-level one
    assert len(prompt.token_ids) - full == 3  # the generation prompt: <|im_start|> "assistant" "\n"


def test_anthropic_usage_mapping():
    for prompt, hit, breakpoints in ((100, 0, (96,)), (100, 64, (96,)), (100, 96, (40, 96)), (100, 80, (40,)),
                                     (100, 48, ())):
        usage = anthropic_usage(prompt, hit, breakpoints, output_tokens=7)
        expected = anthropic_expected(prompt, hit, breakpoints[-1] if breakpoints else None)
        assert usage == {**expected, "output_tokens": 7}
        assert usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"] == prompt
    assert anthropic_usage(100, 80, (40,), 1)["cache_read_input_tokens"] == 40


def test_error_bodies_follow_each_provider():
    error = APIError(404, "no such model", param="model", code="model_not_found")
    assert error.body(OPENAI) == {"error": {"message": "no such model", "type": "invalid_request_error",
                                            "param": "model", "code": "model_not_found"}}
    assert error.body(ANTHROPIC) == {"type": "error", "error": {"type": "not_found_error", "message": "no such model"}}
    assert json.loads(APIError(500, "boom").response(ANTHROPIC).body)["error"]["type"] == "api_error"


class FlakyLlama(LlamaForCausalLM):
    """A tiny real model whose forward raises once, ``fail_in`` calls from now (a device failure, say)."""

    fail_in: int | None = None

    @functools.wraps(LlamaForCausalLM.forward)
    def forward(self, *args, **kwargs):
        if self.fail_in is not None:
            self.fail_in -= 1
            if self.fail_in < 0:
                self.fail_in = None
                raise RuntimeError("simulated device failure")
        return super().forward(*args, **kwargs)


def test_an_engine_failure_fails_the_requests_in_flight_and_the_server_keeps_serving():
    model = tiny_llama(FlakyLlama)
    chat = {"model": "m", "max_tokens": 6, "ignore_eos": True, "messages": [{"role": "user", "content": "hi"}]}
    with TestClient(create_app(LocalEngine(model, tokenizer=ChatMLTokenizer(), num_blocks=256))) as client:
        model.fail_in = 0
        failed = client.post("/v1/chat/completions", json=chat)
        assert failed.status_code == 500 and failed.json()["error"]["type"] == "server_error"
        assert "simulated device failure" in failed.json()["error"]["message"]
        model.fail_in = 3  # prefill, two decode steps, then the failure mid-stream
        with client.stream("POST", "/v1/messages", json={**chat, "stream": True}) as stream:
            events = [line for line in stream.iter_lines() if line.startswith("event: ")]
        assert events[:3] == ["event: message_start", "event: content_block_start", "event: ping"]
        assert events[-1] == "event: error"
        assert client.get("/health").json()["status"] == "ok"
        served = client.post("/v1/chat/completions", json=chat)
        assert served.status_code == 200 and served.json()["usage"]["completion_tokens"] == 6
