"""The package layout: one folder per concept, few top-level modules, no import cycle at import time, and the
public import paths users write still import."""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def modules(package: str) -> list[str]:
    """Every module of ``package`` by its files (nothing is imported to find them)."""
    root = REPO_ROOT / package
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_at_most_eight_modules_at_the_top_of_promptcache():
    top = sorted(p.name for p in (REPO_ROOT / "promptcache").glob("*.py"))
    assert len(top) <= 8, top


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_module_imports_alone_in_any_order(seed):
    """A fresh interpreter imports every module of the three packages in a random order; an import cycle
    (a module that needs a name of a module still being imported) fails whichever order reaches it first."""
    names = modules("promptcache") + modules("lint_rules") + modules("local_backend")
    random.Random(seed).shuffle(names)
    script = ("import importlib, json, sys\nfailed = {}\nfor name in json.loads(sys.argv[1]):\n"
              "    try:\n        importlib.import_module(name)\n"
              "    except Exception as exc:\n        failed[name] = f'{type(exc).__name__}: {exc}'\n"
              "print(json.dumps(failed))")
    out = subprocess.run([sys.executable, "-c", script, json.dumps(names)], capture_output=True, text=True,
                         cwd=REPO_ROOT, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_each_module_imports_first_in_a_fresh_interpreter():
    """Each module of promptcache and lint_rules imported first, with both packages dropped from
    ``sys.modules`` before it (one interpreter for all, for speed): the order that exposes a cycle through it."""
    names = modules("promptcache") + modules("lint_rules")
    script = ("import importlib, json, sys\nfailed = {}\nfor name in json.loads(sys.argv[1]):\n"
              "    for loaded in [m for m in sys.modules if m.split('.')[0] in ('promptcache', 'lint_rules')]:\n"
              "        del sys.modules[loaded]\n"
              "    try:\n        importlib.import_module(name)\n"
              "    except Exception as exc:\n        failed[name] = f'{type(exc).__name__}: {exc}'\n"
              "print(json.dumps(failed))")
    out = subprocess.run([sys.executable, "-c", script, json.dumps(names)], capture_output=True, text=True,
                         cwd=REPO_ROOT, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_the_sdk_core_imports_without_torch_libcst_or_fastapi():
    script = ("import sys\nfor name in ('torch', 'transformers', 'libcst', 'fastapi', 'anthropic', 'openai'):\n"
              "    sys.modules[name] = None\n"
              "import promptcache, promptcache.prompt, promptcache.misses, promptcache.trace, promptcache.simulate\n"
              "import promptcache.clients, promptcache.verify, promptcache.providers, promptcache.tokens\n"
              "p = promptcache.PromptBuilder().system('Rules.').user('Hi').build()\n"
              "print(len(p.to_tokens()))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 0


@pytest.mark.parametrize(("module", "name"), [
    ("promptcache", "PromptBuilder"), ("promptcache", "Conversation"), ("promptcache", "wrap"),
    ("promptcache.builder", "PromptBuilder"), ("promptcache.conversation", "Conversation"),
    ("promptcache.prompt", "PromptBuilder"), ("promptcache.prompt", "Prompt"),
    ("promptcache.trace", "validate_trace"), ("promptcache.trace", "read_trace"), ("promptcache.trace", "TraceClock"),
    ("promptcache.simulate", "simulate_trace"), ("promptcache.lint", "lint_paths"),
    ("promptcache.providers", "model_profile"), ("promptcache.verify", "verify_trace"),
])
def test_documented_import_paths_still_import(module, name):
    import promptcache

    value = getattr(importlib.import_module(module), name)
    if name in promptcache.__all__:
        assert value is getattr(promptcache, name)


def test_no_module_is_far_over_the_size_goal():
    """Modules stay under ~400 lines (style guide); a few dense ones may reach 450."""
    sizes = {str(p.relative_to(REPO_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for package in ("promptcache", "lint_rules", "local_backend")
             for p in Path(REPO_ROOT / package).rglob("*.py")}
    assert {path: n for path, n in sizes.items() if n > 450} == {}
