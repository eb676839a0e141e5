"""Docs that run: every Python block marked runnable in the README and under docs/ is executed, so it cannot rot.

A block is marked by an HTML comment on the line before its fence (invisible on GitHub and in mkdocs):

- ``<!-- runnable -->``: the block runs as written;
- ``<!-- runnable with docs/snippets/offline.py -->``: that preamble runs first (the names a snippet leaves
  to the reader, offline ``anthropic`` / ``openai`` clients, sample files; see the file's docstring).

Each block runs in its own Python process, in an empty temporary folder, with no API key in the environment
and the repository and ``examples/`` on the path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MARKED = re.compile(r"^<!-- runnable(?: with (?P<preamble>\S+))? -->\n```python\n(?P<code>.*?)^```", re.S | re.M)
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def runnable_blocks() -> list[tuple[str, str, str | None]]:
    """``(page:line, code, preamble path or None)`` of every marked block."""
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in MARKED.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            blocks.append((f"{page.relative_to(REPO)}:{line}", match["code"], match["preamble"]))
    return blocks


BLOCKS = runnable_blocks()


def test_the_readme_sdk_snippet_and_the_offline_blocks_are_marked():
    where = {place.split(":")[0] for place, _, _ in BLOCKS}
    assert {"README.md", "docs/sdk.md", "docs/traces.md", "docs/simulate.md", "docs/lint.md",
            "docs/local-backend.md"} <= where
    readme = [code for place, code, _ in BLOCKS if place.startswith("README.md")]
    assert any("PromptBuilder().system(RULES)" in code for code in readme)
    # a marker with no block after it, or a typo in it, would silently run nothing
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert len(re.findall(r"^<!-- runnable", text, re.M)) == len(MARKED.findall(text)), page  # prose may quote one


@pytest.mark.parametrize(("place", "code", "preamble"), BLOCKS, ids=[place for place, _, _ in BLOCKS])
def test_marked_block_runs(place, code, preamble, tmp_path):
    source = code if preamble is None else (REPO / preamble).read_text(encoding="utf-8") + "\n" + code
    script = tmp_path / "block.py"
    script.write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "examples"), env.get("PYTHONPATH", "")])
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{place} failed:\n{done.stderr[-3000:]}"
