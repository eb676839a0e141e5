"""The demo app (examples/lint_demo, run by `make demo`) shows exactly the mistakes its README lists."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_demo_is_a_complete_app():
    # Every module the demo imports exists: it imports (clients built with dummy keys) and routes /chat.
    demo = REPO_ROOT / "examples" / "lint_demo"
    script = (
        "import support_bot.app as app, support_bot.fallback, support_bot.tools as tools\n"
        "print(sorted(r.path for r in app.app.routes if r.path == '/chat'), len(tools.enabled_tools()))\n"
    )
    env = {**os.environ, "ANTHROPIC_API_KEY": "test", "OPENAI_API_KEY": "test", "SUPPORT_BOT_FEATURES": "check_quota"}
    done = subprocess.run([sys.executable, "-c", script], cwd=demo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['/chat']", "3"]
