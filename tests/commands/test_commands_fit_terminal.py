"""Tables and lines that fit the terminal: at 80 and 120 columns every number of the data appears whole
(never wrapped or cut to ``…``) and no line is wider than the terminal; narrower, records fold into blocks;
in a pipe every row stays on one line. Covers simulate, diff, lint --output-format full and rules
(verify and demo: tests/verify/test_verify_fits_terminal.py; engine-bench: tests/backend/test_bench.py)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from promptcache.cli import main
from promptcache.commands.tables import Column, fit_table

WIDTHS = (80, 120)
TRACES = ("good_support_chat.jsonl", "bad_timestamp_system.jsonl", "mixed_multi_tenant.jsonl")


def cut(output: str, numbers: list[str]) -> list[str]:
    """The numbers that do not appear whole in ``output`` (missing, wrapped or cut)."""
    return [n for n in numbers if not re.search(rf"(?<![\w.,]){re.escape(n)}(?![\w,]|\.\d)", output)]


def run(args: list[str], width: int | None) -> str:
    """``promptcache ARGS`` with stdout as a terminal of ``width`` columns (COLUMNS), or a pipe (None)."""
    result = CliRunner().invoke(main, args, env={"COLUMNS": str(width) if width else None})
    assert result.exit_code in (0, 1), result.output
    return "\n".join(line.rstrip() for line in result.stdout.splitlines()) + "\n"  # rich pads table cells


def widest(output: str) -> int:
    return max(len(line.rstrip()) for line in output.splitlines())


@pytest.mark.parametrize("trace", TRACES)
def test_simulate_keeps_every_number_whole_at_80_and_120_columns(traces_dir, trace):
    data = json.loads(run(["simulate", str(traces_dir / trace), "--format", "json"], None))
    numbers = [f"{r[key]:,}" for r in data["requests"]
               for key in ("prompt_tokens", "cache_read_tokens", "cache_write_tokens", "uncached_tokens")]
    numbers += [f"${r['cost']:,.4f}" for r in data["requests"]]
    for width in WIDTHS:
        out = run(["simulate", str(traces_dir / trace)], width)
        assert cut(out, numbers) == [], (width, out)
        assert "\u2026" not in out and widest(out) <= width


def test_simulate_folds_one_record_per_block_when_too_narrow_and_keeps_rows_whole_in_a_pipe(traces_dir):
    trace = str(traces_dir / "bad_timestamp_system.jsonl")
    data = json.loads(run(["simulate", trace, "--format", "json"], None))
    narrow = run(["simulate", trace], 44)
    assert cut(narrow, [f"{r['prompt_tokens']:,}" for r in data["requests"]]) == []
    assert widest(narrow) <= 44 and "# 1\n" in narrow and "volatile_value (system[0].text)" in narrow
    piped = run(["simulate", trace], None)
    rows = [line for line in piped.splitlines() if "volatile_value (system[0].text)" in line]
    assert len(rows) == len(data["requests"]) - 1  # one line per request, the first one is first_request
    assert all(f"{r['prompt_tokens']:,}" in piped for r in data["requests"])


def test_diff_wraps_its_lines_under_their_labels_and_cuts_only_the_shared_context(traces_dir):
    trace = str(traces_dir / "bad_timestamp_system.jsonl")
    data = json.loads(run(["diff", trace, "--at", "1", "--format", "json"], None))
    numbers = [f"{data[k]:,}" for k in ("token_offset", "prompt_tokens", "common_prefix_tokens",
                                        "static_after_divergence")]
    for width in WIDTHS:
        out = run(["diff", trace, "--at", "1"], width)
        assert cut(out, numbers) == [] and widest(out) <= width, out
        assert "2026-03-18T14:00:00+00:00" in out and "2026-03-18T14:00:23+00:00" in out  # the changed values
    out = run(["diff", trace, "--at", "1"], 80)
    assert "hint     drop the value or move it into the newest user turn, at the coarsest\n" \
           "         granularity that works" in out
    earlier, new = (line for line in out.splitlines() if line.startswith(("  - earlier", "  + new")))
    assert len(earlier) == len(new) == 80 and earlier.endswith("\u2026")
    piped = run(["diff", trace, "--at", "1"], None)
    assert f"  - earlier  {data['earlier_snippet']}".replace("\n", "\\n") in piped


def test_lint_full_wraps_messages_at_the_terminal_width_and_keeps_source_lines(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("import datetime\nimport anthropic\n\nclient = anthropic.Anthropic()\n"
                   "SYSTEM = f\"You are helpful. Now: {datetime.datetime.now()}\"\n\n"
                   "def ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=100,\n"
                   "        system=SYSTEM, messages=[{'role': 'user', 'content': q}])\n", encoding="utf-8")
    for width in WIDTHS:
        out = run(["lint", str(app), "--output-format", "full", "--no-cache"], width)
        assert "PC101" in out and cut(out, ["5", "9"]) == []
        source = 'SYSTEM = f"You are helpful. Now: {datetime.datetime.now()}"'
        assert f"5 | {source}\n" in out  # source lines are never wrapped
        assert all(len(line) <= width for line in out.splitlines() if " | " not in line and "Checked" not in line)
        raw = CliRunner().invoke(main, ["lint", str(app), "--output-format", "full", "--no-cache"], env={"COLUMNS": str(width)})
        assert [line for line in raw.stdout.splitlines() if line.endswith(" ")] == []  # no padding to the width
    piped = run(["lint", str(app), "--output-format", "full", "--no-cache"], None)
    for width in WIDTHS:  # a header that wraps just after its position, or inside the code and name, leaves no padding
        for spare in range(-8, 4):
            room = width - len(f"{tmp_path}/:5:35:") - len("app.py") - spare
            nested = tmp_path / ("d" * room) / "app.py"
            nested.parent.mkdir(exist_ok=True)
            nested.write_text(app.read_text(encoding="utf-8"), encoding="utf-8")
            raw = CliRunner().invoke(main, ["lint", str(nested), "--output-format", "full", "--no-cache"],
                                     env={"COLUMNS": str(width)})
            assert [line for line in raw.stdout.splitlines() if line.endswith(" ")] == [], (width, spare)
    message = next(line for line in piped.splitlines() if line.startswith("  ") and "reaches" in line)
    assert len(message) > 80  # one line in a pipe


def test_rules_fits_80_columns():
    out = run(["rules"], 80)
    assert widest(out) <= 80 and "PC101" in out and "volatile-in-system-prompt" in out


def test_fit_table_never_cuts_a_number_and_folds_below_the_narrowest_table():
    columns = (Column("index", "#"), Column("session", justify="left", text=True), Column("prompt tokens", "prompt"),
               Column("cached tokens", "cached"), Column("miss cause", "cause", justify="left", text=True))
    rows = [[str(i), f"tenant-{i}", f"{1_234_567 + i:,}", f"{987_654 + i:,}",
             "history_rewritten (messages[3].content[0].text)"] for i in range(3)]
    numbers = [cell for row in rows for cell in row[2:4]]
    outputs = {}
    for width in (120, 80, 60, 30):
        console = Console(width=width, record=True, file=open("/dev/null", "w"))
        console.print(fit_table(console, "a title", columns, rows))
        outputs[width] = console.export_text()
        assert cut(outputs[width], numbers) == [] and widest(outputs[width]) <= width
    assert "prompt tokens" in outputs[120] and "prompt tokens" not in outputs[60]  # short headers
    assert "index" in outputs[80] or "#" in outputs[80]
    assert "# 2" in outputs[30]  # one record per block
