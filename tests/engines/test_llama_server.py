"""``promptcache verify --backend URL`` against a real llama.cpp ``llama-server`` serving the embedded model (GGUF).

Each replay gets a fresh server (llama.cpp has no cache reset route). Three server set-ups:

* ``ONE_SLOT``: one slot, no host-memory prompt cache: a slot keeps only its last sequence, so interleaved
  sessions evict each other (the engine's capacity, reported as an engine cause, never the app's);
* ``HOST_CACHE``: one slot plus llama.cpp's host-memory prompt cache (``--cache-ram``): the prompt a slot is
  about to lose is saved and restored when a later request reuses it, so whole traces replay near the oracle;
* ``--chat-template chatml`` (llama.cpp's built-in, which drops ``tools``) and a context too small for a trace.

The per-trace figures (local engine and llama-server) go to ``build/llama.cpp/engines_table.md``, which
``make test-engines`` prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from llama_support import read_table, running_server

from promptcache.cli import main
from promptcache.misses.prefix_index import common_prefix
from promptcache.tokens.chatml import chatml_encoding, encode_chatml
from promptcache.trace.records import read_trace
from promptcache.verify.backends import HTTPBackend, LocalBackend, openai_body
from promptcache.verify.report import verify_trace
from promptcache.verify.verdict import MIN_EVICTED_TOKENS

ONE_SLOT = ("--parallel", "1", "--ctx-size", "16384", "--cache-ram", "0")
"""One slot, one sequence, no host-memory prompt cache: interleaved sessions evict each other."""
HOST_CACHE = ("--parallel", "1", "--ctx-size", "16384", "--cache-ram", "4096")
"""One slot plus up to 4 GiB of saved prompts in host memory (llama.cpp's prompt cache)."""
INTERLEAVED = "mixed_multi_tenant.jsonl"
"""A good app whose twelve sessions interleave: on one slot they evict each other."""
TABLE = Path(__file__).resolve().parents[2] / "build" / "llama.cpp" / "engines_table.md"
ROWS: dict[str, dict[str, str]] = {}


@pytest.fixture(scope="module")
def traces(traces_dir):
    return sorted(traces_dir.glob("*.jsonl"))


def replay(url: str, records, **options):
    backend = HTTPBackend(url, **options)
    try:
        return verify_trace(records, backend), backend
    finally:
        backend.close()


def local_engine():
    """A tiny random model with the embedded model's vocabulary and ChatML tokenizer (same token ids, fast)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from local_backend import LocalEngine
    from local_backend.embedded import EMBEDDED_CONTEXT, EMBEDDED_VOCAB
    from local_backend.tokenizer import ChatMLTokenizer

    config = LlamaConfig(vocab_size=EMBEDDED_VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=EMBEDDED_CONTEXT,
                         tie_word_embeddings=True, bos_token_id=None, pad_token_id=None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).eval()
    return LocalEngine(model, tokenizer=ChatMLTokenizer(), num_blocks=16_384)


def figures(report) -> str:
    s = report.summary()
    ratio = "n/a" if s["hit_vs_oracle"] is None else f"{s['hit_vs_oracle']:.3f}"
    return f"{s['hit_rate']:.1%} / {s['oracle_hit_rate']:.1%} / {ratio}"


def test_the_server_tokenises_as_the_embedded_tokenizer(tmp_path, traces):
    import httpx

    text = "Hello, world!  It's 14:00:23 UTC; naïve café ✓ <b>bold</b>\n\n  indented\tx = f(1, 2)\n"
    records = [read_trace(path)[0] for path in traces]
    with running_server(*ONE_SLOT, log=tmp_path / "server.log") as url:
        ids = httpx.post(f"{url}/tokenize", json={"content": text, "parse_special": False}).json()["tokens"]
        backend = HTTPBackend(url)
        try:
            served = [backend.prompt_ids(r.api, r.body) for r in records]
        finally:
            backend.close()
    assert ids == chatml_encoding().encode(text, disallowed_special=())
    assert backend.engine == "llama.cpp" and backend.block_size == 1
    assert backend.oracle_source == "the server's /apply-template + /tokenize"
    for path, record, prompt in zip(traces, records, served):
        chat = openai_body(record.api, record.body)
        if path.name == "bad_agent_tool_shuffle.jsonl":
            # llama-server re-serialises each tool ("type", then "function": name, description, parameters), so a
            # tool's key order as sent does not reach the prompt: the same length, other tokens
            assert prompt != encode_chatml(chat["messages"], chat.get("tools")), path.name
            continue
        assert prompt == encode_chatml(chat["messages"], chat.get("tools")), path.name


def test_sequential_single_session_replays_hit_the_oracle(tmp_path, traces):
    """One session per trace, in order, on one slot: the server hits what the oracle says wherever its slot still
    holds the prefix; where the session returns to an earlier form its slot no longer holds (whitespace drift
    back to an older spelling), the shortfall is reported as the engine's, request by request. (A host-memory
    prompt cache would not help there: llama-server restores a saved prompt only when the new request reuses at
    least a quarter of it, tools/server/server-task.cpp ``server_prompt_cache::load``: ``if (f_keep_cur < 0.25f)
    continue; // don't trash large prompts``.)

    Whatever the oracle says, a slot holds its last sequence: each request hits at least its longest common prefix
    with the session's previous request, in the server's own token ids, less the one token it must compute
    (a server that evicted everything fails here)."""
    for path in traces:
        records = read_trace(path)
        session = [r for r in records if r.session == records[0].session]
        with running_server(*ONE_SLOT, log=tmp_path / f"{path.stem}.log") as url:
            report, backend = replay(url, session)
            ids = server_prompt_ids(url, session)
        for r, prompt, previous in zip(report.requests[1:], ids[1:], ids):
            assert r.cached_tokens >= common_prefix(prompt, previous) - 1, (path.name, r.index, r.cached_tokens)
        summary = report.summary()
        assert summary["errors"] == 0 and summary["oracle"] == "exact", summary["failed"]
        assert summary["oracle_source"] == "the server's /apply-template + /tokenize" and summary["engine"] == "llama.cpp"
        held = [r for r in report.requests if r.engine_cause is None]
        for r in report.requests:
            assert r.cached_tokens <= r.oracle_tokens, (path.name, r.index, r.cached_tokens, r.oracle_tokens)
            if r.engine_cause is None:
                assert r.oracle_tokens - r.cached_tokens < MIN_EVICTED_TOKENS, (path.name, r.index)
            else:
                assert r.engine_cause.cause == "evicted", (path.name, r.index, r.engine_cause)
        hit, best = sum(r.cached_tokens for r in held), sum(r.oracle_tokens for r in held)
        if best >= 0.05 * sum(r.prompt_tokens for r in held):  # near-zero figures (a few tokens) say nothing
            assert hit / best >= 0.95, (path.name, figures(report))
        evicted = len(report.requests) - len(held)
        if evicted:
            assert f"engine: evicted on {evicted} of {len(session)}" in summary["verdict"], summary["verdict"]
        ROWS.setdefault(path.name, {})["single"] = (f"{len(session)} req: {figures(report)}"
                                                    + (f", evicted {evicted}" if evicted else ""))
    write_table()


def test_whole_traces_keep_the_local_engines_app_verdict(tmp_path, traces):
    """Every session of every trace, interleaved as recorded, with the host-memory prompt cache, and on the local
    engine. The app verdict is the classifier's, read from the trace bodies, so it cannot differ by engine; what
    the equal verdicts check is that every request ran and measured (no failure turns the verdict into ``n/a``),
    and the oracle, computed from the server's own token ids (its chat template and tokenizer, end to end), never
    falls below what the server hit. The figures go to the table; no hit / oracle bound is asserted here (the
    single-session test bounds the hits)."""
    engine = local_engine()
    for path in traces:
        records = read_trace(path)
        engine.reset_prefix_cache()
        local = verify_trace(records, LocalBackend(engine))
        with running_server(*HOST_CACHE, log=tmp_path / f"{path.stem}.log") as url:
            served, _ = replay(url, records)
        assert served.errors == 0, served.summary()["failed"]
        local_summary, summary = local.summary(), served.summary()
        assert local_summary["hit_vs_oracle"] in (None, 1.0), (path.name, figures(local))
        assert summary["good"] == local_summary["good"], (path.name, summary["verdict"])
        assert summary["app_verdict"] == local_summary["app_verdict"], path.name
        for r in served.requests:
            assert r.cached_tokens <= r.oracle_tokens, (path.name, r.index)
        ROWS.setdefault(path.name, {}).update(
            sessions=str(len({r.session for r in records})), local=figures(local), llama=figures(served),
            app=summary["app_verdict"], engine=summary["engine_verdict"] or "-")
    write_table()


def test_interleaved_sessions_on_one_slot_keep_the_app_verdict_and_blame_the_engine(tmp_path, traces_dir):
    """Twelve interleaved sessions on one slot evict each other: the app verdict stays good, the engine is
    blamed with what to do; with the host-memory prompt cache (the advice) the same replay hits the oracle."""
    trace = traces_dir / INTERLEAVED
    with running_server(*ONE_SLOT, log=tmp_path / "one_slot.log") as url:
        result = CliRunner().invoke(main, ["verify", str(trace), "--backend", url, "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["good"] is True and summary["app_verdict"].startswith("good")
    assert summary["verdict"].startswith("app: good; engine: evicted on "), summary["verdict"]
    assert "one slot holds one sequence and --cache-ram was 0 or full" in summary["verdict"]
    with running_server(*HOST_CACHE, log=tmp_path / "host_cache.log") as url:
        cached, _ = replay(url, read_trace(trace))
    assert cached.summary()["verdict"] == summary["app_verdict"] and cached.summary()["hit_vs_oracle"] >= 0.95
    ROWS.setdefault(INTERLEAVED, {})["one_slot"] = f"{summary['verdict']} (host cache: {figures(cached)})"
    write_table()


def test_a_template_that_drops_tools_is_reported_as_the_engines(tmp_path, traces_dir):
    trace = traces_dir / "bad_agent_tool_shuffle.jsonl"
    with running_server("--chat-template", "chatml", *HOST_CACHE, log=tmp_path / "server.log") as url:
        result = CliRunner().invoke(main, ["verify", str(trace), "--backend", url], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "verdict: app: bad: tools_changed on" in out
    assert "engine: the server's chat template does not render tools as sent on" in out
    ROWS.setdefault(trace.name, {})["chatml"] = out[out.index("verdict:"):].split(" worst requests")[0]
    write_table()


def test_a_too_small_context_counts_failed_requests(tmp_path, traces_dir):
    trace = traces_dir / "bad_summarize_each_turn.jsonl"  # 1,683-2,166 tokens a request
    with running_server("--parallel", "1", "--ctx-size", "2048", log=tmp_path / "server.log") as url:
        failed = CliRunner().invoke(main, ["verify", str(trace), "--backend", url, "--format", "json",
                                           "--reset-cache"])
        allowed = CliRunner().invoke(main, ["verify", str(trace), "--backend", url, "--allow-failures"],
                                     env={"COLUMNS": "80"})
    assert failed.exit_code == 2, failed.output
    summary = json.loads(failed.stdout)["summary"]
    count = summary["errors"]
    assert 0 < count < 12 and f"{count} of 12 requests failed" in failed.stderr
    assert "pass --allow-failures" in failed.stderr
    assert f"refused {count} of 12 requests" in summary["verdict"]
    assert any("restart the server" in note for note in summary["notes"])
    assert allowed.exit_code == 0, allowed.output
    ROWS.setdefault(trace.name, {})["small_ctx"] = failed.stderr.strip()
    write_table()


def server_prompt_ids(url: str, records) -> list[list[int]]:
    """Each request's prompt ids as the server renders them (``/apply-template`` + ``/tokenize``)."""
    backend = HTTPBackend(url)
    try:
        return [backend.prompt_ids(r.api, r.body) for r in records]
    finally:
        backend.close()


def test_the_table_merges_with_an_earlier_run(tmp_path):
    """A partial run (``-k``, or one that stops early) updates its cells and keeps the other rows."""
    table = tmp_path / "table.md"
    write_table(table, {"a.jsonl": {"sessions": "2", "local": "1%", "one_slot": "verdict a"},
                        "b.jsonl": {"single": "3 req"}})
    write_table(table, {"a.jsonl": {"local": "2%"}, "c.jsonl": {"chatml": "verdict c"}})
    assert read_table(table, TABLE_COLUMNS, TABLE_NOTES) == {
        "a.jsonl": {"sessions": "2", "local": "2%", "one_slot": "verdict a"}, "b.jsonl": {"single": "3 req"},
        "c.jsonl": {"chatml": "verdict c"}}


TABLE_COLUMNS = ("sessions", "local", "llama", "app", "engine", "single")
TABLE_NOTES = ("one_slot", "chatml", "small_ctx")


def write_table(path: Path = TABLE, rows: dict[str, dict[str, str]] | None = None) -> None:
    """Merge ``rows`` (default: this session's :data:`ROWS`) into the table at ``path`` and rewrite it."""
    merged = read_table(path, TABLE_COLUMNS, TABLE_NOTES)
    for name, row in (ROWS if rows is None else rows).items():
        merged.setdefault(name, {}).update(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["| trace | sessions | local: hit / oracle / hit÷oracle | llama-server (host cache) | app verdict | "
             "engine verdict | one session, one slot |", "|---|---:|---|---|---|---|---|"]
    for name, row in sorted(merged.items()):
        if any(key in row for key in TABLE_COLUMNS):
            lines.append(f"| {name} | " + " | ".join(row.get(key, "") for key in TABLE_COLUMNS) + " |")
    extra = [f"- {name}: {key}: {row[key]}" for name, row in sorted(merged.items())
             for key in TABLE_NOTES if key in row]
    path.write_text("\n".join(lines + [""] + extra) + "\n")
