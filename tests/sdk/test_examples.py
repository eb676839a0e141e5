"""The SDK examples run offline end to end: real SDK clients, mock transport, valid traces, and the offline
provider's usage is the simulators' (its printed hit rate is what `promptcache simulate` says on the trace)."""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

from promptcache.simulate import simulate_trace
from promptcache.trace import read_trace
from promptcache.usage import normalize_usage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def examples_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield
    for name in ("support_bot", "doc_qa", "tool_agent", "offline_provider"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(("module", "argv", "expected"), [
    ("support_bot", [], ["sup-002 turn 1: read 3,818", "documents: cache_control ttl=1h", "validator: ok"]),
    ("doc_qa", [], ["dev-103:  4,330 prompt tokens,  4,224 cached", "validator: ok"]),
    ("tool_agent", ["--provider", "anthropic"], ["step 4: answers", "tools in the order sent: get_service_status, "
                                                 "list_deployments, query_metrics, search_runbooks", "validator: ok"]),
])
def test_example_runs_offline_and_simulate_agrees(module: str, argv: list[str], expected: list[str], capsys,
                                                  tmp_path) -> None:
    trace = tmp_path / f"{module}.jsonl"
    assert importlib.import_module(module).main([*argv, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    for text in expected:
        assert text in out
    printed = float(re.search(r"^hit rate ([\d.]+)%; check it with: promptcache simulate ", out, re.M).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        simulation = simulate_trace(trace)
    assert f"{simulation.summary()['hit_rate']:.1%}" == f"{printed}%"
    records = read_trace(trace, strict=True)
    assert [r.t for r in records] == sorted({r.t for r in records}) and records[1].t - records[0].t > 1.0
    reported = [normalize_usage(r.usage) for r in records]  # what the offline provider answered, per request
    assert [(u.cache_read, u.cache_write, u.uncached) for u in reported] == [
        (r.usage.cache_read, r.usage.cache_write, r.usage.uncached) for r in simulation.requests]
