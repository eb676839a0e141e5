"""Progress bars: drawn on stderr only when it is a terminal (here forced with TTY_COMPATIBLE=1, rich's switch) and
the work is large; never in a pipe, so scripts and tests that parse the output see nothing of them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from promptcache.cli import main
from promptcache.commands.lint import PROGRESS_FROM as LINT_FROM
from promptcache.commands.simulate import PROGRESS_FROM as SIMULATE_FROM

TERMINAL = {"TTY_COMPATIBLE": "1"}
PIPE = {"TTY_COMPATIBLE": None, "FORCE_COLOR": None}


def long_trace(source, target, requests: int):
    """``requests`` lines: the source trace's requests again and again, later each time, one session per round."""
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    out, t = [], 0.0
    for n in range(requests):
        record = dict(lines[n % len(lines)])
        t += 1.0
        record["t"], record["session"] = t, f"{record['session']}-{n // len(lines)}"
        out.append(json.dumps(record))
    target.write_text("\n".join(out) + "\n")
    return target


def test_simulate_shows_progress_for_a_large_trace_on_a_terminal_only(traces_dir, tmp_path):
    big = long_trace(traces_dir / "good_rag_doc_qa.jsonl", tmp_path / "big.jsonl", SIMULATE_FROM)
    terminal = CliRunner().invoke(main, ["simulate", str(big), "--format", "json"], env=TERMINAL)
    assert terminal.exit_code == 0, terminal.output
    assert "simulating" in terminal.stderr and f"/{SIMULATE_FROM}" in terminal.stderr and "ETA" in terminal.stderr
    assert len(json.loads(terminal.stdout)["requests"]) == SIMULATE_FROM  # stdout stays parseable
    piped = CliRunner().invoke(main, ["simulate", str(big), "--format", "json"], env=PIPE)
    assert piped.exit_code == 0 and "simulating" not in piped.stderr
    small = CliRunner().invoke(main, ["simulate", str(traces_dir / "good_rag_doc_qa.jsonl")], env=TERMINAL)
    assert small.exit_code == 0 and "simulating" not in small.stderr


def test_lint_shows_progress_for_a_big_tree_on_a_terminal_only(tmp_path):
    for n in range(LINT_FROM):
        (tmp_path / f"app_{n}.py").write_text("import anthropic\n\nclient = anthropic.Anthropic()\n"
                                              f"ANSWER = {n}\n", encoding="utf-8")
    args = ["lint", str(tmp_path), "--no-cache", "-j", "1", "--no-prefilter"]
    terminal = CliRunner().invoke(main, args, env=TERMINAL)
    assert terminal.exit_code == 0, terminal.output
    assert "linting" in terminal.stderr and f"/{LINT_FROM}" in terminal.stderr and "files" in terminal.stderr
    piped = CliRunner().invoke(main, args, env=PIPE)
    assert piped.exit_code == 0 and "linting" not in piped.stderr
    few = CliRunner().invoke(main, ["lint", str(tmp_path / "app_0.py"), "--no-cache"], env=TERMINAL)
    assert few.exit_code == 0 and "linting" not in few.stderr
