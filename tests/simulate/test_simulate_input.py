"""Bad simulate input: reported with its line number and skipped (or exit 2 under --strict), never mistaken
for an API refusal; rule overrides checked against ModelProfile up front."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner
from simbodies import EPHEMERAL, anthropic_body, system_block, user, words

from promptcache.cli import main
from promptcache.simulate import simulate_trace
from promptcache.trace import TraceFormatError, TraceFormatWarning, TraceRecord, write_trace


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def records(*times: float) -> list[TraceRecord]:
    system = [system_block(words(1500), EPHEMERAL)]
    return [TraceRecord(t, "anthropic.messages", "s", anthropic_body(system, [user(f"question {i}")]))
            for i, t in enumerate(times)]


def test_a_t_that_does_not_increase_is_reported(tmp_path) -> None:
    trace = tmp_path / "late.jsonl"
    write_trace(trace, records(0.0, 30.0, 12.0))
    with pytest.warns(TraceFormatWarning, match=r"late.jsonl:3: t=12 is not after the previous request's t=30; t "
                                                r"must be strictly increasing; simulated at t=30"):
        simulation = simulate_trace(trace)
    assert [r.usage.cache_read > 0 for r in simulation.requests] == [False, True, True]
    with pytest.raises(TraceFormatError, match=r"late.jsonl:3: t=12 is not after"):
        simulate_trace(trace, strict=True)
    strict = run("simulate", trace, "--strict")
    assert strict.exit_code == 2 and "error: late.jsonl:3: t=12 is not after" in strict.stderr
    loose = run("simulate", trace, "--format", "json")
    assert loose.exit_code == 0 and "warning: late.jsonl:3: t=12 is not after" in loose.stderr
    assert len(json.loads(loose.stdout)["requests"]) == 3


def test_increasing_t_is_quiet(tmp_path) -> None:
    write_trace(tmp_path / "ok.jsonl", records(0.0, 12.0, 30.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceFormatWarning)
        simulate_trace(tmp_path / "ok.jsonl")
