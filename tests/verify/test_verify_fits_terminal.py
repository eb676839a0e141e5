"""verify's and demo's tables at 80 and 120 columns: every number whole, no line wider than the terminal;
verify's progress bar on a terminal only (tests/commands/test_commands_fit_terminal.py has the other commands)."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from promptcache.cli import main
from promptcache.commands.demo import print_side_by_side
from promptcache.commands.verify import print_report

WIDTHS = (80, 120)


def cut(output: str, numbers: list[str]) -> list[str]:
    """The numbers that do not appear whole in ``output`` (missing, wrapped or cut)."""
    return [n for n in numbers if not re.search(rf"(?<![\w.,]){re.escape(n)}(?![\w,]|\.\d)", output)]


def render(print_, *reports, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, record=True)
    print_(*reports, console)
    return console.export_text()


def token_numbers(report) -> list[str]:
    return [f"{n:,}" for r in report.requests for n in (r.prompt_tokens, r.cached_tokens, r.oracle_tokens)]


@pytest.mark.parametrize("trace", ["bad_summarize_each_turn.jsonl", "mixed_multi_tenant.jsonl"])
def test_verify_table_keeps_every_number_whole_at_80_and_120_columns(replayed, trace):
    report = replayed(trace)
    numbers = token_numbers(report) + [f"{r.ttft_s * 1000:,.0f}" for r in report.requests]
    for width in WIDTHS:
        out = render(print_report, report, width=width)
        assert cut(out, numbers) == [], out
        assert "\u2026" not in out and max(len(line.rstrip()) for line in out.splitlines()) <= width


def test_demo_side_by_side_keeps_every_number_whole_at_80_and_120_columns(replayed):
    good, bad = replayed("good_support_chat.jsonl"), replayed("bad_timestamp_system.jsonl")
    for width in WIDTHS:
        out = render(print_side_by_side, good, bad, width=width)
        pairs = list(zip(good.requests, bad.requests))
        numbers = [f"{n:,}" for g, b in pairs for n in (g.cached_tokens, g.prompt_tokens, b.cached_tokens,
                                                          b.prompt_tokens)]
        assert cut(out, numbers) == [], out
        assert "\u2026" not in out and max(len(line.rstrip()) for line in out.splitlines()) <= width


def test_verify_draws_a_progress_bar_only_when_stderr_is_a_terminal(tiny_model_dir, traces_dir):
    args = ["verify", str(traces_dir / "good_rag_doc_qa.jsonl"), "--model", str(tiny_model_dir),
            "--tokenizer", "chatml"]
    terminal = CliRunner().invoke(main, args, env={"TTY_COMPATIBLE": "1"})
    assert terminal.exit_code == 0, terminal.output
    assert "replaying" in terminal.stderr and "requests" in terminal.stderr and "ETA" in terminal.stderr
    piped = CliRunner().invoke(main, args, env={"TTY_COMPATIBLE": None, "FORCE_COLOR": None})
    assert piped.exit_code == 0 and "replaying" not in piped.stderr and "\x1b" not in piped.output
