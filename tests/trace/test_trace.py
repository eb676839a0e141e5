"""Trace reading, writing and validation (the traces README's validator list)."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import anthropic
import httpx2
import pytest

from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceFormatError, TraceFormatWarning, TraceRecord, read_trace, write_trace
from promptcache.trace import validate_body, validate_record, validate_trace
from promptcache.trace.recorder import append_record

COUNTS = {"good_support_chat": 17, "bad_timestamp_system": 17, "good_rag_doc_qa": 10, "bad_rag_question_first": 10,
          "good_agent_tools": 18, "bad_agent_tool_shuffle": 18, "bad_summarize_each_turn": 12, "bad_sliding_window": 20,
          "bad_whitespace_drift": 14, "mixed_multi_tenant": 22}


def test_shared_traces_read_validate_and_rewrite_byte_identically(traces, traces_dir: Path, tmp_path: Path) -> None:
    for name, records in traces.items():
        assert len(records) == COUNTS[name]
        assert [r.line for r in records] == list(range(1, len(records) + 1))
        source = traces_dir / f"{name}.jsonl"
        assert validate_trace(source) == []
        assert validate_trace(records) == []
        out = tmp_path / f"{name}.jsonl"
        write_trace(out, records)
        assert out.read_bytes() == source.read_bytes()


def test_malformed_lines_are_reported_with_their_number_and_skipped(traces, tmp_path: Path) -> None:
    good = traces["good_rag_doc_qa"][0].to_json()
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join([good, "{not json", '{"t": 1.0, "api": "openai.chat", "session": "s"}',
                               '{"t": 2.0, "api": "gemini.chat", "session": "s", "body": {}}', "", good.replace('"t":0.0', '"t":3.0')]) + "\n")
    with pytest.warns(TraceFormatWarning) as warned:
        records = read_trace(path)
    assert [r.line for r in records] == [1, 6]
    messages = [str(w.message) for w in warned]
    assert messages[0].startswith("broken.jsonl:2: not JSON")
    assert messages[1] == "broken.jsonl:3: missing record key(s) ['body']; line skipped"
    assert messages[2].startswith("broken.jsonl:4: api must be one of")
    problems: list[TraceFormatError] = []
    assert len(read_trace(path, on_problem=problems.append)) == 2
    assert [p.line for p in problems] == [2, 3, 4]
    with pytest.raises(TraceFormatError) as raised:
        read_trace(path, strict=True)
    assert raised.value.line == 2 and raised.value.source == "broken.jsonl"


def test_a_line_that_is_not_utf8_is_a_malformed_line_named_with_its_byte_and_offset(traces, tmp_path: Path) -> None:
    good = traces["good_rag_doc_qa"][0].to_json().encode()
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(good + b"\n" + b'{"session": "caf\xe9"}\n' + good.replace(b'"t":0.0', b'"t":3.0') + b"\n")
    offset = len(good) + 1 + len(b'{"session": "caf')
    expected = (f"latin1.jsonl:2: not valid UTF-8 (byte 0xe9 at offset {offset}): traces are UTF-8 JSON Lines; "
                "re-save it as UTF-8")
    with pytest.warns(TraceFormatWarning) as warned:
        records = read_trace(path)
    assert [r.line for r in records] == [1, 3]  # the rest of the file is still read
    assert [str(w.message) for w in warned] == [expected + "; line skipped"]
    with pytest.raises(TraceFormatError) as raised:
        read_trace(path, strict=True)
    assert str(raised.value) == expected and raised.value.line == 2
    assert [(i.line, i.message) for i in validate_trace(path)][0] == (2, expected.split(": ", 1)[1])


def test_skipped_lines_are_counted_and_an_unusable_trace_raises_when_records_are_required(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b"{nope\n\n\xff\n[1]\n")
    skip = SkippedLines(on_problem=[].append)
    assert read_trace(path, on_problem=skip) == [] and skip.count == 3
    with pytest.raises(EmptyTraceError, match=r"^no usable requests in .*junk\.jsonl \(3 lines skipped\)$") as raised:
        read_trace(path, on_problem=lambda problem: None, require_records=True)
    assert raised.value.skipped == 3
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(EmptyTraceError, match=r"\(0 lines skipped\)"):
        read_trace(empty, require_records=True)
    assert read_trace(empty) == []  # a library read of an empty file is not an error by itself


def test_file_level_checks(traces, tmp_path: Path) -> None:
    a, b = traces["good_rag_doc_qa"][0], traces["good_rag_doc_qa"][1]
    path = tmp_path / "t.jsonl"
    reordered = json.dumps({"api": a.api, "t": 5.0, "session": "x", "body": a.body}, separators=(",", ":"))
    path.write_text("\n".join([b.to_json(), a.to_json(), reordered, "nope"]) + "\n")
    issues = [(i.line, i.message) for i in validate_trace(path)]
    assert (2, "t=0.0 is not after the previous request's t=34.6; t must be strictly increasing") in issues
    assert (3, "record keys out of order ['api', 't', 'session', 'body']; write t, api, session, body, usage") in issues
    assert any(line == 4 and message.startswith("not JSON") for line, message in issues)
    assert [line for line, _ in issues] == sorted(line for line, _ in issues)  # line order, unreadable lines too
    assert validate_record({"t": 1, "api": a.api, "session": "s", "body": a.body})[0].message == \
        "t must be a float, got the integer 1"


def issue_messages(api: str, body: dict) -> list[str]:
    return [f"{i.path}: {i.message}" for i in validate_body(api, body)]


def test_anthropic_body_checks(traces) -> None:
    base = traces["good_support_chat"][16].body  # 11 messages, parallel tool uses, top-level cache_control

    def broken(edit) -> list[str]:
        body = copy.deepcopy(base)
        edit(body)
        return issue_messages("anthropic.messages", body)

    assert broken(lambda b: b.update(temperature=0.5)) == [
        "body: keys not in SDK order: ['max_tokens', 'messages', 'model', 'cache_control', 'system', 'tools', "
        "'temperature']; the SDK sends ['max_tokens', 'messages', 'model', 'cache_control', 'system', 'temperature', 'tools']"]
    assert broken(lambda b: b.update(frobnicate=1))[0] == "body: unknown key(s) ['frobnicate'] for anthropic.messages"
    assert broken(lambda b: b["tools"].append(dict(b["tools"][0]))) == ["body.tools[3]: duplicate tool name 'lookup_order'"]
    assert broken(lambda b: b["system"][0].update(text="  ")) == ["body.system[0]: system blocks must be non-empty text blocks"]
    assert broken(lambda b: b["messages"].insert(2, {"role": "user", "content": "again"})) == \
        ["body.messages[3]: two user messages in a row; roles must alternate"]
    tool_turn = next(i for i, m in enumerate(base["messages"]) if m["role"] == "assistant"
                     and any(x["type"] == "tool_use" for x in m["content"]))
    found = broken(lambda b: b["messages"][tool_turn + 1]["content"].pop(0))
    assert any("`tool_use` ids were found without `tool_result` blocks immediately after" in f for f in found)
    found = broken(lambda b: b["messages"][tool_turn]["content"][1]["input"].update(order_number=123))
    assert any("arguments do not match the tool schema" in f for f in found)
    five = broken(lambda b: [m["content"][0].update(cache_control={"type": "ephemeral"}) for m in b["messages"][:3]])
    assert "body: A maximum of 4 blocks with cache_control may be provided. Found 5." in five
    ttl = broken(lambda b: b["messages"][0]["content"][0].update(cache_control={"type": "ephemeral", "ttl": "1h"}))
    assert any(f.startswith("body.messages[0].content[0].cache_control: a ttl='1h' breakpoint follows a ttl='5m' one")
               for f in ttl)
    assert broken(lambda b: b["messages"][0]["content"][0].update(text="")) == ["body.messages[0].content[0]: empty text block"]


def test_openai_body_checks(traces) -> None:
    base = traces["good_agent_tools"][3].body

    def broken(edit) -> list[str]:
        body = copy.deepcopy(base)
        edit(body)
        return issue_messages("openai.chat", body)

    two_users = broken(lambda b: b["messages"].insert(2, {"role": "user", "content": "again"}))
    assert "body.messages[2]: two user messages in a row" in two_users
    calls = next(i for i, m in enumerate(base["messages"]) if m.get("tool_calls"))
    found = broken(lambda b: b["messages"].pop(calls + 1))
    assert any("must be followed by tool messages responding to each 'tool_call_id'" in f for f in found)
    found = broken(lambda b: b["messages"][calls]["tool_calls"][0]["function"].update(arguments="[1]"))
    assert any(f.endswith("arguments must be a JSON object") for f in found)
    found = broken(lambda b: b["messages"][calls]["tool_calls"][0]["function"].update(arguments='{"service": 7}'))
    assert any("arguments do not match the tool schema" in f for f in found)
    found = broken(lambda b: b["messages"].append({"role": "assistant", "content": "done"}))
    assert found[-1] == f"body.messages[{len(base['messages'])}]: the last message must be user or tool"
    assert broken(lambda b: b["tools"].append(copy.deepcopy(b["tools"][0])))[0].endswith("duplicate tool name 'get_service_status'")
    assert [i.message for i in validate_body("gemini.chat", {})] == ["unknown api 'gemini.chat'"]


def test_record_keeps_wire_bytes_and_usage(tmp_path: Path) -> None:
    wire = '{"max_tokens":5,"messages":[{"role":"user","content":"caf\\u00e9"}],"model":"claude-sonnet-4-5"}'
    record = TraceRecord.from_wire(1.5, "anthropic.messages", "s-1", wire.encode(), usage={"input_tokens": 7, "output_tokens": 1})
    assert record.body["messages"][0]["content"] == "café"
    assert record.to_json() == ('{"t":1.5,"api":"anthropic.messages","session":"s-1","body":' + wire
                                + ',"usage":{"input_tokens":7,"output_tokens":1}}')
    path = tmp_path / "rec.jsonl"
    append_record(path, record)
    append_record(path, TraceRecord(2.0, "anthropic.messages", "s-1", dict(record.body)),
                  redact=lambda body: {**body, "messages": [{"role": "user", "content": "[redacted]"}]})
    lines = path.read_text().splitlines()
    assert lines[0] == record.to_json()
    assert lines[1] == ('{"t":2.0,"api":"anthropic.messages","session":"s-1","body":{"max_tokens":5,"messages":'
                        '[{"role":"user","content":"[redacted]"}],"model":"claude-sonnet-4-5"}}')
    assert [r.usage for r in read_trace(path)] == [{"input_tokens": 7, "output_tokens": 1}, None]
    with pytest.raises(TraceFormatError, match="request body is not a JSON object"):
        TraceRecord.from_wire(0.0, "anthropic.messages", "s", b"[1]")


def test_a_body_recorded_from_the_real_sdk_validates(traces) -> None:
    """Bytes captured from anthropic.Anthropic through a mock transport pass the validator, key order as sent."""
    source = traces["good_support_chat"][13].body
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": source["model"], "stop_reason": "end_turn",
            "stop_sequence": None, "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": 4400, "cache_creation_input_tokens": 86}})

    client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    kwargs = {k: v for k, v in source.items()}
    with warnings.catch_warnings():  # some SDK releases flag claude-sonnet-4-5 as deprecated, others do not
        warnings.simplefilter("ignore", DeprecationWarning)
        response = client.messages.create(**kwargs)
    record = TraceRecord.from_wire(0.0, "anthropic.messages", "sup-003", seen[0], usage=response.usage.model_dump(exclude_none=True))
    assert validate_record(record) == []
    assert list(record.body) == list(source) and record.body == source
    assert record.to_json().startswith('{"t":0.0,"api":"anthropic.messages","session":"sup-003","body":' + seen[0].decode())


def test_the_reader_accepts_a_bom_and_crlf_and_names_the_json_error_by_char(traces, tmp_path: Path) -> None:
    a, b = traces["good_rag_doc_qa"][0], traces["good_rag_doc_qa"][1]
    path = tmp_path / "win.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + a.to_json().encode() + b"\r\n" + b.to_json().encode() + b"\r\n")
    assert read_trace(path, strict=True) == [a, b]
    assert validate_trace(path) == []
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xef\xbb\xbf" + b'{"t": 1 "api"\n')
    with pytest.raises(TraceFormatError) as raised:
        read_trace(bad, strict=True)
    assert str(raised.value) == "bad.jsonl:1: not JSON (Expecting ',' delimiter at char 8)"
    assert [(i.line, i.message) for i in validate_trace(bad)] == [(1, "not JSON (Expecting ',' delimiter at char 8)")]


def test_a_gzip_file_or_one_json_document_is_one_problem_counting_every_line(traces, tmp_path: Path) -> None:
    import gzip

    zipped = tmp_path / "t.jsonl.gz"
    zipped.write_bytes(gzip.compress("".join(r.to_json() + "\n" for r in traces["good_rag_doc_qa"]).encode()))
    document = tmp_path / "body.json"
    document.write_text(json.dumps(traces["good_rag_doc_qa"][0].body, indent=2))
    for path, message in ((zipped, "t.jsonl.gz is gzip-compressed; decompress it first (gunzip)"),
                          (document, "body.json is one JSON document, not JSON Lines: pass it as a request body "
                                     "(promptcache diff A.json B.json) or write one request per line")):
        problems: list[TraceFormatError] = []
        skip = SkippedLines(on_problem=problems.append)
        assert read_trace(path, on_problem=skip) == []
        assert [str(p) for p in problems] == [message]
        old_count = sum(1 for line in path.read_bytes().split(b"\n")
                        if not _decodes(line) or line.decode().strip())
        assert skip.count == old_count > 1
        with pytest.raises(TraceFormatError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
            read_trace(path, strict=True)
        assert [(i.line, i.message) for i in validate_trace(path)] == [(None, message)]


def _decodes(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_validate_trace_of_a_missing_file_raises_and_of_an_empty_file_is_empty(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        validate_trace(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"\n \n")
    assert validate_trace(tmp_path / "empty.jsonl") == []
