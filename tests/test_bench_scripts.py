"""Every ``bench/`` script still imports and parses its options (``--help``); no timing is judged here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_the_bench_script_answers_help(script):
    out = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage:" in out.stdout.lower()
