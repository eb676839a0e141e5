"""simulate/verify reporting: --as-of is a date type naming the option (and dates before the rules data get a
note), a relative cost always shows its unit, and --format json records the --min-hit-rate gate."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from promptcache.cli import main
from promptcache.providers.profiles import load_rules
from promptcache.simulate.driver import as_of_coverage

TRACE = "good_support_chat.jsonl"


def simulate(traces_dir, *args: str):
    return CliRunner().invoke(main, ["simulate", str(traces_dir / TRACE), *args])


@pytest.mark.parametrize(("value", "message"), [
    ("yesterday", "'yesterday' is not a date (YYYY-MM-DD)"),
    ("2026-13-01", "'2026-13-01' is not a date (YYYY-MM-DD): month must be in 1..12"),
    ("2026-1-1", "'2026-1-1' is not a date (YYYY-MM-DD)"),
])
def test_as_of_must_be_a_date(traces_dir, value, message):
    result = simulate(traces_dir, "--as-of", value)
    assert result.exit_code == 2
    assert f"Invalid value for '--as-of': {message}" in result.stderr and "Traceback" not in result.output


def test_a_date_before_the_rules_data_gets_a_note(traces_dir):
    earliest = min(source["read"] for source in load_rules()["sources"].values())
    assert as_of_coverage(earliest) is None and as_of_coverage(None) is None
    result = simulate(traces_dir, "--as-of", "2020-01-01", "--format", "json")
    assert result.exit_code == 0, result.output
    assert (f"note: --as-of 2020-01-01 is before the earliest date the rules data was read ({earliest.isoformat()}, "
            "providers.toml)") in result.stderr
    assert "before the earliest date" not in simulate(traces_dir, "--as-of", earliest.isoformat(),
                                                      "--format", "json").stderr


def test_a_relative_cost_names_its_unit(traces_dir):
    result = CliRunner().invoke(main, ["simulate", str(traces_dir / TRACE), "--unit", "relative"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "cost (base-input tokens)" in result.stdout
    summary = next(line for line in result.stdout.splitlines() if "input cost" in line)
    assert "base-input tokens with caching vs" in summary and summary.count("base-input tokens") == 3
    usd = CliRunner().invoke(main, ["simulate", str(traces_dir / TRACE)], env={"COLUMNS": "200"})
    assert "base-input tokens" not in usd.stdout and "$" in usd.stdout


@pytest.mark.parametrize(("rate", "passed", "code"), [("95%", False, 1), ("0.5", True, 0)])
def test_the_json_summary_records_the_gate(traces_dir, rate, passed, code):
    result = simulate(traces_dir, "--format", "json", "--min-hit-rate", rate)
    assert result.exit_code == code
    summary = json.loads(result.stdout)["summary"]
    assert summary["gate"] == {"min_hit_rate": pytest.approx(0.95 if rate == "95%" else 0.5), "passed": passed}
    assert "gate" not in json.loads(simulate(traces_dir, "--format", "json").stdout)["summary"]
