"""verify's divergence offsets count the backend's tokens, as the table does, not the classifier's ChatML/cl100k
tokens (``promptcache.verify.report.in_prompt_tokens``): a backend with another tokenizer gets offsets in its own."""

from __future__ import annotations

from promptcache.tokens.chatml import render_chatml
from promptcache.misses.prefix_index import common_prefix
from promptcache.trace.records import read_trace
from promptcache.verify.report import verify_trace
from promptcache.verify.backends import Replay, openai_body


class ByteLevelBackend:
    """A real prefix cache over a byte-level tokenizer (one token per UTF-8 byte of the ChatML text): block-aligned
    longest prefix of any earlier prompt, at most ``len - 1``. Its token counts are ~4x cl100k's."""

    name, model, block_size, oracle_exact = "bytes", "byte-level", 16, True

    def __init__(self) -> None:
        self.seen: list[list[int]] = []
        self.notes: list[str] = []

    def prompt_ids(self, api, body):
        chat = openai_body(api, body)
        return list(render_chatml(chat["messages"], chat.get("tools")).encode("utf-8"))

    def run(self, api, body, prompt_ids):
        best = max((common_prefix(prompt_ids, old) for old in self.seen), default=0)
        self.seen.append(prompt_ids)
        cached = min(best, len(prompt_ids) - 1) // self.block_size * self.block_size
        return Replay(len(prompt_ids), cached, 0.001, [])

    def reset_cache(self):
        return True

    def close(self):
        pass


def test_offsets_count_the_backends_tokens(traces_dir):
    records = read_trace(traces_dir / "bad_sliding_window.jsonl")[:6]
    backend = ByteLevelBackend()
    report = verify_trace(records, backend)
    prompts = [backend.prompt_ids(r.api, r.body) for r in records]
    slid = [r for r in report.requests if r.divergence.cause == "history_rewritten"]
    assert slid, [r.divergence.cause for r in report.requests]
    for row in report.requests:
        d = row.divergence
        assert d.prompt_tokens == row.prompt_tokens == len(prompts[row.index])
        if d.earlier_index is not None:
            shared = common_prefix(prompts[row.index], prompts[d.earlier_index])
            assert d.token_offset == d.common_prefix_tokens == shared
    row = slid[0]
    assert f"(token {row.divergence.token_offset:,} of {row.prompt_tokens:,};" in row.divergence.summary()
    assert row.cached_tokens == row.divergence.token_offset // 16 * 16  # the table's cached column agrees
