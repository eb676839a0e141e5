"""``promptcache verify`` on an ``openai.responses`` trace recorded from real ``openai`` client calls
(``responses_support.agent_trace``), on the tiny ChatML model (``--model DIR --tokenizer chatml``).

Expected prompts are written out as Chat messages by hand (not through promptcache's converter): the
Responses instructions are the system message, the chained request holds the earlier input, the earlier
output (a function call) and its own input.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from responses_support import LONG_INSTRUCTIONS, LOOKUP_TOOL, agent_trace

from promptcache.cli import main
from promptcache.misses.prefix_index import common_prefix
from promptcache.tokens.chatml import encode_chatml
from promptcache.trace.records import write_trace

TOOLS = [{"type": "function", "function": {k: v for k, v in LOOKUP_TOOL.items() if k != "type"}}]
FIRST = [{"role": "system", "content": LONG_INSTRUCTIONS}, {"role": "user", "content": "Where is order 1042?"}]
CHAINED = [*FIRST, {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order": "1042"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'}]


def test_verify_replays_the_chain_and_matches_the_oracle(tiny_model_dir, tmp_path):
    trace = tmp_path / "t.jsonl"
    write_trace(trace, agent_trace())
    result = CliRunner().invoke(main, ["verify", str(trace), "--format", "json", "--model", str(tiny_model_dir),
                                       "--tokenizer", "chatml"])
    assert result.exit_code == 0, result.output
    assert "previous_response_id 'resp_gone' names a response that is not in the trace" in result.stderr
    assert "the chained prefix (that response's input and output) is unknown" in result.stderr
    document = json.loads(result.stdout)
    rows, summary = document["requests"], document["summary"]
    first, chained = encode_chatml(FIRST, TOOLS), encode_chatml(CHAINED, TOOLS)
    assert [row["prompt_tokens"] for row in rows[:2]] == [len(first), len(chained)]
    assert [row["cached_tokens"] for row in rows[:2]] == [0, common_prefix(first, chained) // 16 * 16]
    assert rows[1]["cached_tokens"] >= len(first) - 16
    assert all(row["cached_tokens"] == row["oracle_tokens"] for row in rows)
    assert summary["requests"] == 3 and summary["hit_vs_oracle"] == 1.0 and summary["oracle"] == "exact"
    assert summary["good"] is False and summary["worst"][0]["cause"] == "system_changed"
    assert summary["worst"][0]["path"] == "instructions"
