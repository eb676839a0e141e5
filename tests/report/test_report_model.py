"""The cache report's numbers come from simulate / verify unchanged; the page is self-contained."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from promptcache.cli import main
from promptcache.report import from_simulation, render_html
from promptcache.simulate import simulate_trace

GOOD, BAD = "good_support_chat.jsonl", "bad_timestamp_system.jsonl"


@pytest.fixture(scope="module")
def simulated(traces_dir):
    runs = {}

    def get(name):
        if name not in runs:
            simulation = simulate_trace(traces_dir / name)
            runs[name] = simulation, from_simulation(simulation, str(traces_dir / name))
        return runs[name]
    return get


@pytest.mark.parametrize("name", [GOOD, BAD, "bad_agent_tool_shuffle.jsonl", "mixed_multi_tenant.jsonl"])
def test_rows_are_the_simulations_numbers(simulated, name):
    simulation, report = simulated(name)
    assert len(report.rows) == len(simulation.requests)
    for row, r in zip(report.rows, simulation.requests):
        assert (row.index, row.session, row.prompt) == (r.index, r.session, r.prompt_tokens)
        assert (row.cached, row.written, row.uncached) == (r.usage.cache_read, r.usage.cache_write, r.usage.uncached)
        assert row.cached + row.written + row.uncached == row.prompt
        assert row.cached <= row.oracle <= row.prompt  # the ideal never reads less than the provider did
        assert row.cause == r.miss_cause and row.divergence is r.divergence
        assert row.expected == r.expected  # the rows simulate's table calls unexpected, and no other
    summary = simulation.summary()
    assert report.hit_rate == pytest.approx(summary["hit_rate"], abs=1e-12)
    assert (report.cost_with, report.cost_without) == (summary["cost"], summary["cost_without_cache"])


def test_good_and_bad_verdicts_and_top_causes(simulated):
    _, good = simulated(GOOD)
    _, bad = simulated(BAD)
    assert good.good and good.top_causes() == []
    assert [row.cause for row in good.rows].count("first_request") == 1  # sup-002, sup-003 read sup-001's prefix
    assert not bad.good and bad.verdict == "bad: volatile_value on 16 of 17 requests"
    (top,) = bad.top_causes()
    assert (top.cause, top.requests) == ("volatile_value", 16)
    assert top.tokens == sum(r.prompt - r.cached for r in bad.rows[1:])
    # the timestamp sits 627 tokens in, below claude's 1,024-token minimum: nothing could have been read
    assert all(row.oracle == 0 for row in bad.rows)
    assert good.oracle_rate > 0.9 and bad.oracle_rate == 0.0


def test_the_page_is_self_contained_with_one_bar_per_request(simulated):
    _, report = simulated(BAD)
    page = render_html(report)
    assert page.count('<svg class="bar"') == page.count('class="request ') == 17
    assert page.count('class="request unexpected"') == 16
    assert not re.search(r"""(src|href)\s*=|@import|url\(|https?://""", page)  # loads nothing
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    rows = json.loads(data)
    d = rows[1]["divergence"]
    assert (d["layer"], d["path"], d["earlier_index"]) == ("system", "system[0].text", 0)
    assert ["delete", "00"] in d["diff"] and ["insert", "23"] in d["diff"]


def test_text_is_escaped(simulated, traces_dir, tmp_path):
    line = (traces_dir / GOOD).read_text().splitlines()[0]
    record = json.loads(line)
    record["session"] = "</script><b>x"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    page = render_html(from_simulation(simulate_trace(path), str(path)))
    assert "</script><b>" not in page and "&lt;/script&gt;&lt;b&gt;x" in page and "<\\/script><b>x" in page


def test_report_and_simulate_html_write_the_same_page(traces_dir, tmp_path):
    runner = CliRunner()
    by_report = runner.invoke(main, ["report", str(traces_dir / GOOD), "-o", str(tmp_path / "a.html")])
    assert by_report.exit_code == 0, by_report.output
    assert f"report written to {tmp_path / 'a.html'} (good: " in by_report.stderr
    assert "hit rate 91.4%)" in by_report.stderr
    by_simulate = runner.invoke(main, ["simulate", str(traces_dir / GOOD), "--html", str(tmp_path / "b.html")])
    assert by_simulate.exit_code == 0, by_simulate.output
    assert "hit rate 91.4%" in by_simulate.stdout  # the table is still printed
    assert (tmp_path / "a.html").read_text() == (tmp_path / "b.html").read_text()


def test_default_output_name_and_usage_errors(traces_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["report", str(traces_dir / BAD)])
    assert result.exit_code == 0 and (tmp_path / "bad_timestamp_system.html").is_file()
    wrong = runner.invoke(main, ["report", str(traces_dir / BAD), "--block-size", "32"])
    assert wrong.exit_code == 2 and "--block-size, --tokenizer and --engine need --backend" in wrong.stderr
    wrong = runner.invoke(main, ["report", str(traces_dir / BAD), "--backend", "local", "--provider", "openai"])
    assert wrong.exit_code == 2 and "drop them with --backend" in wrong.stderr
    unwritable = runner.invoke(main, ["report", str(traces_dir / BAD), "-o", str(tmp_path / "no" / "x.html")])
    assert unwritable.exit_code == 2 and "Invalid value for '-o' / '--output': cannot write" in unwritable.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(main, ["report", str(empty)])
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_a_refused_request_is_a_bar_less_row_and_makes_the_trace_bad(traces_dir, tmp_path):
    records = [json.loads(line) for line in (traces_dir / GOOD).read_text().splitlines()[:3]]
    body = records[1]["body"]  # five cache_control breakpoints: the API refuses the request (at most 4)
    body["system"] = [{**body["system"][0], "text": part, "cache_control": {"type": "ephemeral"}}
                      for part in (body["system"][0]["text"], "a", "b", "c")]
    path = tmp_path / "refused.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    simulation = simulate_trace(path)
    assert simulation.requests[1].error
    report = from_simulation(simulation, str(path))
    row = report.rows[1]
    assert (row.prompt, row.cached, row.written, row.uncached, row.expected) == (0, 0, 0, 0, False)
    assert not report.good and report.verdict.endswith("1 refused by the API")
    page = render_html(report)
    assert page.count('<svg class="bar"') == 3 and '<span class="cause bad">refused</span>' in page


@pytest.mark.parametrize("command", [["report", "-o"], ["simulate", "--html"], ["verify", "--html"]])
def test_an_unwritable_report_path_is_refused_before_any_work(command, shared_dir, tmp_path):
    """The path is checked up front: a replay of many minutes is never thrown away at the end."""
    trace = str(shared_dir / "traces" / "good_support_chat.jsonl")
    result = CliRunner().invoke(main, [command[0], trace, command[1], str(tmp_path / "missing" / "r.html")])
    assert result.exit_code == 2
    assert f"cannot write {tmp_path / 'missing' / 'r.html'}: the folder {tmp_path / 'missing'} does not exist" in \
        " ".join(result.output.split())
    assert "hit rate" not in result.output  # nothing ran


def test_a_trace_with_skipped_lines_is_reported_incomplete(shared_dir, tmp_path):
    """The verdict covers only the requests read: the page and the command say how many lines were skipped."""
    first = (shared_dir / "traces" / "good_support_chat.jsonl").read_text(encoding="utf-8").splitlines()[0]
    trace = tmp_path / "broken.jsonl"
    trace.write_text(first + "\nnot json\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(trace), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "(incomplete: 1 trace line skipped; of the 1 read: good:" in result.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<body class="incomplete"' in page
    assert "broken.jsonl:2: not JSON (Expecting value at char 0); line skipped</li>" in page


def test_report_takes_a_providers_rules_file_as_simulate_does(shared_dir, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[providers.anthropic.models]]\nid = "claude-sonnet-4-5"\ninput_usd_per_mtok = 1.5\n',
                     encoding="utf-8")
    trace = str(shared_dir / "traces" / "good_support_chat.jsonl")
    pages = []
    for extra in ([], ["--providers", str(rules)]):
        out = tmp_path / f"r{len(pages)}.html"
        assert CliRunner().invoke(main, ["report", trace, "-o", str(out), *extra]).exit_code == 0
        pages.append(out.read_text(encoding="utf-8"))
    costs = [re.search(r'class="value">\$([0-9.]+)', page).group(1) for page in pages]
    assert costs == ["0.0494", "0.0247"]  # half the list price of claude-sonnet-4-5 ($3 -> $1.5 per Mtok)
