"""Fixtures of the SDK core tests: the shared traces, read once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache.trace import TraceRecord, read_trace

TRACE_NAMES = (
    "good_support_chat", "bad_timestamp_system", "good_rag_doc_qa", "bad_rag_question_first",
    "good_agent_tools", "bad_agent_tool_shuffle", "bad_summarize_each_turn", "bad_sliding_window",
    "bad_whitespace_drift", "mixed_multi_tenant",
)
"""The ten shared traces in README order."""


@pytest.fixture(scope="session")
def traces(traces_dir: Path) -> dict[str, list[TraceRecord]]:
    """name (without .jsonl) -> records of every shared trace."""
    return {name: read_trace(traces_dir / f"{name}.jsonl", strict=True) for name in TRACE_NAMES}
