"""Streaming (SSE) with the official clients, and ``/metrics`` agreeing with the usage the clients received."""

from __future__ import annotations

from server_support import HEADER, anthropic_expected, metric, metrics, oracle_hit, unique_system

from promptcache.tokens.chatml import encode_chatml

MAX_TOKENS = 6


def test_openai_stream_chunks_and_usage(openai_client, tokenize):
    messages = [{"role": "system", "content": unique_system()}, {"role": "user", "content": "Hello there"}]
    openai_client.chat.completions.create(model="gpt-4.1-mini", messages=messages, max_tokens=1)
    messages = [*messages, {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "Track 1042."}]
    stream = openai_client.chat.completions.create(model="gpt-4.1-mini", messages=messages, max_tokens=MAX_TOKENS,
                                                   stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] in ("stop", "length") and all(f is None for f in finishes[:-1])
    usage = chunks[-1].usage
    assert not chunks[-1].choices and usage is not None
    ids = tokenize(messages)
    assert usage.prompt_tokens == len(ids)
    assert usage.prompt_tokens_details.cached_tokens == oracle_hit([tokenize(messages[:2])], ids) > 0
    assert 1 <= usage.completion_tokens <= MAX_TOKENS
    assert (usage.completion_tokens == MAX_TOKENS) == (finishes[-1] == "length")
    assert all(c.model == "gpt-4.1-mini" and c.id == chunks[0].id for c in chunks)


def test_anthropic_stream_helper_and_raw_events(anthropic_client):
    system = [{"type": "text", "text": unique_system(), "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hello there"}]}]
    with anthropic_client.messages.stream(model="claude-sonnet-4-6", max_tokens=MAX_TOKENS, system=system,
                                          messages=messages) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    chat = [{"role": "system", "content": system[0]["text"]}, {"role": "user", "content": "Hello there"}]
    prompt = encode_chatml(chat)
    system_offset = len(encode_chatml(chat[:1], add_generation_prompt=False))
    assert "".join(block.text for block in final.content) == text
    assert final.stop_reason in ("end_turn", "max_tokens") and 1 <= final.usage.output_tokens <= MAX_TOKENS
    assert {k: getattr(final.usage, k) for k in ("cache_read_input_tokens", "cache_creation_input_tokens",
                                                   "input_tokens")} == anthropic_expected(len(prompt), 0, system_offset)

    raw = anthropic_client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=MAX_TOKENS, system=system, messages=messages, stream=True)
    hit = int(raw.headers[HEADER])
    events = list(raw.parse())
    kinds = [e.type for e in events]
    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert set(kinds[2:-3]) <= {"content_block_delta"}
    assert hit == oracle_hit([prompt], prompt) >= system_offset // 16 * 16
    start, end = events[0].message.usage, events[-2].usage
    assert start.cache_read_input_tokens == end.cache_read_input_tokens == min(hit, system_offset)
    creation = system_offset - min(hit, system_offset)
    assert start.cache_creation_input_tokens == end.cache_creation_input_tokens == creation
    assert 1 <= end.output_tokens <= MAX_TOKENS
    assert events[-2].delta.stop_reason == ("max_tokens" if end.output_tokens == MAX_TOKENS else "end_turn")


def test_metrics_match_the_usage_returned(openai_client, anthropic_client, server):
    before = metrics(server)
    system = unique_system()
    prompt_sum = cached_sum = output_sum = 0
    chat = [{"role": "system", "content": system}, {"role": "user", "content": "Where is order 77?"}]
    for _ in range(2):
        reply = openai_client.chat.completions.create(model="gpt-4.1-mini", messages=chat, max_tokens=3)
        prompt_sum += reply.usage.prompt_tokens
        cached_sum += reply.usage.prompt_tokens_details.cached_tokens
        output_sum += reply.usage.completion_tokens
    stream = openai_client.chat.completions.create(model="gpt-4.1-mini", messages=chat, max_tokens=3, stream=True,
                                                   stream_options={"include_usage": True})
    usage = list(stream)[-1].usage
    prompt_sum += usage.prompt_tokens
    cached_sum += usage.prompt_tokens_details.cached_tokens
    output_sum += usage.completion_tokens
    raw = anthropic_client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=3, system=[{"type": "text", "text": system,
                                                          "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "Where is order 77?"}])
    message = raw.parse()
    u = message.usage
    prompt_sum += u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
    cached_sum += int(raw.headers[HEADER])
    output_sum += u.output_tokens
    after = metrics(server)

    def delta(name: str) -> float:
        return metric(after, name) - metric(before, name)

    assert cached_sum > 0
    assert delta("promptcache_prompt_tokens_total") == prompt_sum
    assert delta("promptcache_cached_tokens_total") == cached_sum
    assert delta("promptcache_prefix_cache_queries_total") == prompt_sum
    assert delta("promptcache_prefix_cache_hits_total") == cached_sum
    assert delta("promptcache_computed_prompt_tokens_total") == prompt_sum - cached_sum
    assert delta("promptcache_generation_tokens_total") == output_sum
    assert delta("promptcache_requests_finished_total") == 4
    assert delta('promptcache_http_requests_total{endpoint="/v1/chat/completions",status="200"}') == 3
    assert delta('promptcache_http_requests_total{endpoint="/v1/messages",status="200"}') == 1
    assert delta("promptcache_time_to_first_token_seconds_count") == 4
    assert metric(after, "promptcache_requests_running") == 0
    blocks = {state: after[f'promptcache_kv_blocks{{model="promptcache-embedded",state="{state}"}}']
              for state in ("used", "cached_evictable", "empty", "total")}
    assert blocks["used"] + blocks["cached_evictable"] + blocks["empty"] == blocks["total"]
