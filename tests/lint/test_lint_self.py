"""The project lints itself: ``promptcache lint`` over the repository reports nothing.

The repository's own ``[tool.promptcache.lint]`` (pyproject.toml) excludes
``tests/`` (deliberate mistakes) and ``examples/lint_demo/`` (the demo of what
lint finds); everything else -- the SDK, the engine, the server, the examples
and the benchmarks -- must stay clean, or carry a documented ignore.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_lints_clean_under_its_own_configuration() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "promptcache.cli", "lint", ".", "--output-format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    findings = json.loads(result.stdout)
    assert findings == [], "\n".join(f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in findings)
    assert result.returncode == 0, result.stderr


def test_the_lint_demo_is_still_linted_when_named() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "promptcache.cli", "lint", "examples/lint_demo", "--output-format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert len(json.loads(result.stdout)) == 8
