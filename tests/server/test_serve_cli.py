"""``promptcache serve`` / ``verify`` / ``demo`` without the backend extra: a message naming the install command."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner
from server_support import tiny_llama

from promptcache.cli import main

INSTALL = "pip install 'promptcache[backend]'"


@pytest.mark.parametrize("args", [["serve"], ["verify", "TRACE", "--backend", "local"], ["demo"]])
def test_without_the_backend_extra_the_install_command_is_named(monkeypatch, tmp_path, args):
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    result = CliRunner().invoke(main, [str(trace) if a == "TRACE" else a for a in args])
    assert result.exit_code == 2, result.output
    assert INSTALL in result.output and "torch is not installed" in result.output


def test_serve_help_lists_the_options():
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--model", "--tokenizer", "--host", "--port", "--block-size", "--kv-cache-mb", "--eviction",
                   "--max-num-seqs", "--served-model-name", "--max-model-len"):
        assert option in result.output


def test_a_model_folder_without_a_tokenizer_says_to_pass_one(tmp_path):
    tiny_llama().save_pretrained(tmp_path)
    for command in (["serve", "--model", str(tmp_path)], ["demo", "--model", str(tmp_path)]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1, result.output
        assert f"{tmp_path} holds no tokenizer" in result.output and "--tokenizer chatml" in result.output
