"""The SDK examples run offline end to end: real SDK clients, mock transport, valid traces."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def examples_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield
    for name in ("support_bot", "doc_qa", "tool_agent", "offline_provider"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(("module", "argv", "expected"), [
    ("support_bot", [], ["sup-002 turn 1: read 3,828", "documents: cache_control ttl=1h", "validator: ok"]),
    ("doc_qa", [], ["dev-103:  4,330 prompt tokens,  4,224 cached", "validator: ok"]),
    ("tool_agent", ["--provider", "anthropic"], ["step 4: answers", "tools in the order sent: get_service_status, "
                                                 "list_deployments, query_metrics, search_runbooks", "validator: ok"]),
])
def test_example_runs_offline(module: str, argv: list[str], expected: list[str], capsys) -> None:
    assert importlib.import_module(module).main(argv) == 0
    out = capsys.readouterr().out
    for text in expected:
        assert text in out
