"""``promptcache lint -o FILE``: a report file that cannot be written is refused before anything is linted (the check
:func:`promptcache.trace.output_path.check_writable_file` shared with ``engine-bench --json`` and recorded traces)."""

from __future__ import annotations

import os

import pytest


@pytest.mark.parametrize("kind", ["missing folder", "a file as the folder", "not writable"])
def test_an_output_file_that_cannot_be_written_is_a_usage_error_before_linting(write_tree, run_cli, monkeypatch,
                                                                                kind):
    root = write_tree({"app.py": "x = 1\n", "notes.txt": "not a folder\n"})
    target = {"missing folder": root / "reports" / "lint.json", "a file as the folder": root / "notes.txt" / "r.json",
              "not writable": root / "lint.json"}[kind]
    expected = {
        "missing folder": f"the folder {root / 'reports'} does not exist; create it first (nothing is created for "
                          "you) or pass a path inside an existing folder",
        "a file as the folder": f"{root / 'notes.txt'} is a file, not a folder; pass a path inside a folder",
        "not writable": f"the folder {root} is not writable; pass a path you can write to",
    }[kind]
    if kind == "not writable":  # root may write anywhere: make this folder read-only to the check
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if os.fspath(p) == str(root) else real_access(p, mode))
    code, out, err = run_cli("lint", root / "app.py", "-o", target, "--output-format", "json")
    assert (code, out, err) == (2, "", f"error: cannot write {target}: {expected}\n")  # no summary: nothing linted
    assert not target.exists()


def test_lint_explain_points_to_the_rule_command(run_cli):
    # ruff users type `lint --explain CODE`; promptcache shows a rule's page with `promptcache rule CODE`.
    code, out, err = run_cli("lint", "--explain", "PC203")
    assert code == 2 and out == ""
    assert err.endswith("Error: lint has no --explain option: run `promptcache rule PC203` to read a rule's page "
                        "(`promptcache rules` lists them)\n")
    code, _, _ = run_cli("rule", "PC203")
    assert code == 0


def test_the_summary_counts_one_line_in_the_singular(write_tree, run_cli):
    root = write_tree({"app.py": "x = 1\n"})
    code, out, err = run_cli("lint", root / "app.py")
    assert code == 0 and "Checked 1 file (1 line): parsed" in out + err
