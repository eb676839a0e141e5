"""Fixtures of the verify tests: the tiny ChatML model (see ``verify_support``), in memory and saved to a folder."""

from __future__ import annotations

import pytest
from verify_support import tiny_chatml_model


@pytest.fixture(scope="session")
def tiny_model():
    return tiny_chatml_model()


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_model, tmp_path_factory):
    """The tiny model saved with ``save_pretrained`` (no tokenizer: pass ``--tokenizer chatml``)."""
    path = tmp_path_factory.mktemp("tiny-chatml-model")
    tiny_model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def replayed(tiny_model, traces_dir):
    """``replayed(name)``: the shared trace ``name`` verified on the tiny model, ample pool (once per session)."""
    from verify_support import tiny_engine

    from promptcache.verify.report import verify_trace
    from promptcache.verify.backends import LocalBackend

    reports = {}

    def get(name: str):
        if name not in reports:
            reports[name] = verify_trace(traces_dir / name, LocalBackend(tiny_engine(tiny_model)))
        return reports[name]
    return get
