"""docs/figures/make_figures.py regenerates the docs' figures from real runs (the fast two here; `make figures`
runs all, the engine ones included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "figures" / "make_figures.py"


def test_the_script_writes_the_readme_figures(tmp_path, shared_dir):
    done = subprocess.run([sys.executable, str(SCRIPT), "--only", "prompt_layers", "hit_rate_per_request",
                           "--out", str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PROMPTCACHE_SHARED": str(shared_dir)}, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("prompt_layers.png", "hit_rate_per_request.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        assert f"wrote {tmp_path / name}" in done.stdout
    assert (SCRIPT.parent / "prompt_layers.png").is_file()  # the committed copies the README shows
