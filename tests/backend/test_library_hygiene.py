"""House rules the engine's library code keeps: public names are documented, and no ``assert`` does
the work of a check (``python -O`` strips them). The HTTP server (``local_backend/server``) is
another part's and is left out here."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from backend_support import cpu_engine, random_tokens

import local_backend
from local_backend import SamplingParams
from local_backend.benchmarks.timing import cold_cache

ENGINE_DIR = Path(local_backend.__file__).parent


def _engine_modules() -> list[str]:
    return [info.name for info in pkgutil.walk_packages(local_backend.__path__, "local_backend.")
            if not info.name.startswith("local_backend.server")]


def _undocumented(module) -> list[str]:
    missing = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, property):
                    documented = inspect.getdoc(member)
                elif inspect.isfunction(member) or isinstance(member, (staticmethod, classmethod)):
                    documented = inspect.getdoc(getattr(obj, attr))  # a documented base-class method counts
                else:
                    continue
                if not documented:
                    missing.append(f"{name}.{attr}")
    return missing


@pytest.mark.parametrize("module_name", _engine_modules())
def test_every_public_function_class_and_method_has_a_docstring(module_name):
    assert _undocumented(importlib.import_module(module_name)) == []


def test_engine_library_code_has_no_assert_statements():
    found = [f"{path.relative_to(ENGINE_DIR)}:{node.lineno}"
             for path in sorted(ENGINE_DIR.rglob("*.py")) if "server" not in path.relative_to(ENGINE_DIR).parts
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Assert)]
    assert found == []


def test_a_cold_run_refuses_to_start_while_requests_hold_blocks(llama_model):
    engine = cpu_engine(llama_model, num_blocks=16)
    engine.add_request("holding", random_tokens(40, seed=60), SamplingParams(max_tokens=8))
    engine.step()
    with pytest.raises(RuntimeError, match="cannot reset the prefix cache for a cold run"):
        cold_cache(engine)
    engine.abort_request("holding")
    cold_cache(engine)
    assert engine.stats()["prefix_cache"]["resets"] == 1
