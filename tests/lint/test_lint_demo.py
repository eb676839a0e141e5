"""The demo app (examples/lint_demo, run by `make demo`) shows exactly the mistakes its README lists."""

from __future__ import annotations

from pathlib import Path

from lint_support import REPO_ROOT

from promptcache.lint.config import LintConfig
from promptcache.lint.runner import lint_paths


def test_demo_findings_match_its_readme():
    demo = REPO_ROOT / "examples" / "lint_demo"
    result = lint_paths([demo], LintConfig(root=demo), jobs=1)
    got = sorted((Path(f.path).name, f.code) for f in result.findings)
    assert got == [
        ("app.py", "PC102"),
        ("app.py", "PC201"),
        ("app.py", "PC203"),
        ("fallback.py", "PC105"),
        ("prompts.py", "PC101"),
        ("prompts.py", "PC401"),
        ("tools.py", "PC301"),
        ("tools.py", "PC304"),
    ]
    readme = (demo / "README.md").read_text(encoding="utf-8")
    for name, code in got:
        assert f"`support_bot/{name}` | {code}" in readme
