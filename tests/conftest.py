"""Shared fixtures.

``shared_dir`` finds the read-only ``shared/`` folder (lint cases, traces,
design docs): ``$PROMPTCACHE_SHARED`` when set, else ``../shared`` beside the
checkout, as CI lays it out. ``traces`` reads the ten shared traces once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptcache.trace.records import TraceRecord, read_trace

REPO_ROOT = Path(__file__).resolve().parent.parent


def find_shared_dir() -> Path | None:
    """Return the shared folder, or None when it is not present."""
    env = os.environ.get("PROMPTCACHE_SHARED")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared")
    for candidate in candidates:
        if (candidate / "cases").is_dir() and (candidate / "traces").is_dir():
            return candidate.resolve()
    return None


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared folder; fails (never skips) when it is missing, so CI cannot pass silently."""
    found = find_shared_dir()
    if found is None:
        pytest.fail(
            "shared/ folder not found: put it beside the checkout (../shared) "
            "or set PROMPTCACHE_SHARED=/path/to/shared"
        )
    return found


@pytest.fixture(scope="session")
def lint_cases_dir(shared_dir: Path) -> Path:
    return shared_dir / "cases" / "lint"


@pytest.fixture(scope="session")
def traces_dir(shared_dir: Path) -> Path:
    return shared_dir / "traces"


TRACE_NAMES = (
    "good_support_chat", "bad_timestamp_system", "good_rag_doc_qa", "bad_rag_question_first",
    "good_agent_tools", "bad_agent_tool_shuffle", "bad_summarize_each_turn", "bad_sliding_window",
    "bad_whitespace_drift", "mixed_multi_tenant",
)
"""The ten shared traces in README order."""


@pytest.fixture(scope="session")
def traces(traces_dir: Path) -> dict[str, list[TraceRecord]]:
    """name (without .jsonl) -> records of every shared trace."""
    return {name: read_trace(traces_dir / f"{name}.jsonl", strict=True) for name in TRACE_NAMES}


@pytest.fixture(autouse=True)
def lint_result_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own empty lint result cache (``PROMPTCACHE_CACHE_DIR``), so a finding is never read
    from another test's run; tests of the cache itself set their own folder."""
    monkeypatch.setenv("PROMPTCACHE_CACHE_DIR", str(tmp_path_factory.mktemp("lint-cache")))


@pytest.fixture(autouse=True)
def provider_rules_of_the_package(monkeypatch):
    """Every test sees the installed providers.toml as on the day it was reviewed, whatever day it runs: no
    stale-data warning (tests/providers/test_userfile.py checks it with fixed dates), no model retired since
    (announced shutdown dates are data), and user rules a test installed (``--providers FILE``) are removed
    after it."""
    from promptcache.providers import datafile
    from promptcache.providers.profiles import clear_cache

    monkeypatch.setattr(datafile, "today", datafile.reviewed_on)
    yield
    if datafile.user_rules_origin() is not None:
        datafile.install_user_rules(None)
        clear_cache()
