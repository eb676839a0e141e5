"""Shared fixtures.

``shared_dir`` finds the read-only ``shared/`` folder (lint cases, traces,
design docs): ``$PROMPTCACHE_SHARED`` when set, else ``../shared`` beside the
checkout, as CI lays it out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
