"""``bench/serve_load.py`` runs end to end (small sizes, against the test server); no timing is judged here."""

from __future__ import annotations

import json
import subprocess
import sys

from server_support import REPO_ROOT


def test_serve_load_bench_smoke(server):
    command = [sys.executable, str(REPO_ROOT / "bench" / "serve_load.py"), "--url", server, "--requests", "8",
               "--threads", "4", "--max-tokens", "2", "--system-words", "200"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["completed"] == 8 and result["errors"] == [] and result["passed"] is True
    assert result["output_tokens"] == 16  # ignore_eos: exactly max_tokens each
    assert result["hit_tokens"] >= 0.9 * result["oracle_tokens"] > 0
    assert result["shared_prefix_tokens"] > 200 and result["ttft_p99_s"] >= result["ttft_p50_s"] > 0
    assert "requests/s" in done.stderr and "TTFT p50 / p99" in done.stderr
