"""``verify --html`` and ``report --backend local``: the page shows the local engine's measured numbers."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from promptcache.cli import main
from promptcache.report import from_verify

TRACE = "bad_summarize_each_turn.jsonl"  # 12 requests of ~2k tokens, history rewritten each turn


def _rows(page: str) -> list[dict]:
    return json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))


def test_verify_html_shows_the_replay(tiny_model_dir, traces_dir, tmp_path):
    out = tmp_path / "verify.html"
    args = [str(traces_dir / TRACE), "--model", str(tiny_model_dir), "--tokenizer", "chatml"]
    result = CliRunner().invoke(main, ["verify", *args, "--format", "json", "--html", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert f"report written to {out} (bad: history_rewritten on" in result.stderr
    page = out.read_text()
    rows = _rows(page)
    assert len(rows) == page.count('<svg class="bar"') == 12
    assert sum(r["cached"] for r in rows) == summary["cached_tokens"]
    assert all(r["written"] == 0 and r["cached"] + r["uncached"] == r["prompt"] for r in rows)
    assert [r["oracle"] for r in rows] == [r["oracle_tokens"] for r in json.loads(result.stdout)["requests"]]
    assert 'class="written"' not in page.split('<div class="legend">')[1].split("</div>")[0]  # no writes legend
    assert f"{summary['prompt_tokens'] - summary['cached_tokens']:,} prefill tokens" in page
    assert rows[3]["cause"] == "history_rewritten" and rows[3]["divergence"]["path"] == "messages[0].content[0].text"


def test_report_backend_local_writes_the_same_page_as_verify_html(tiny_model_dir, traces_dir, tmp_path):
    model = ["--model", str(tiny_model_dir), "--tokenizer", "chatml"]
    by_report = CliRunner().invoke(main, ["report", str(traces_dir / TRACE), "--backend", "local", *model,
                                          "-o", str(tmp_path / "r.html")])
    assert by_report.exit_code == 0, by_report.output
    by_verify = CliRunner().invoke(main, ["verify", str(traces_dir / TRACE), *model, "--html", str(tmp_path / "v.html")])
    assert by_verify.exit_code == 0, by_verify.output
    strip = lambda rows: [{k: v for k, v in r.items() if k != "ttft_s"} for r in rows]  # noqa: E731
    assert strip(_rows((tmp_path / "r.html").read_text())) == strip(_rows((tmp_path / "v.html").read_text()))
    assert "prefill computed with caching" in (tmp_path / "r.html").read_text()


def test_from_verify_keeps_the_replay_s_numbers(replayed):
    replay = replayed(TRACE)
    report = from_verify(replay)
    assert report.source == "verify" and not report.good and report.verdict == replay.verdict()[1]
    assert report.cost_unit == "prefill tokens" and report.cost_without == report.prompt_tokens == replay.totals()[0]
    assert report.hit_rate == replay.hit_rate and report.oracle_rate == replay.oracle_hit_rate
    assert [r.cause for r in report.rows][:2] == ["first_request", "history_rewritten"]
