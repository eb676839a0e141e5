"""Fixtures of the simulator tests: the shared traces, each simulated once per session."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

from promptcache.simulate import Simulation, simulate_trace


@functools.cache
def _simulated(path: str) -> Simulation:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate_trace(path)


@pytest.fixture(scope="session")
def simulated(traces_dir: Path):
    """``simulated(name)``: the shared trace ``name`` simulated under its own provider's rules (cached)."""
    return lambda name: _simulated(str(traces_dir / f"{name}.jsonl"))
