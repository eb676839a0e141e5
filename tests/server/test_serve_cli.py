"""``promptcache serve`` / ``verify`` / ``demo`` before the engine runs: without the backend extra, a message naming
the install command; a model or tokenizer that cannot be loaded, exit 2 with the same message from each."""

from __future__ import annotations

import json
import shutil
import socket
import sys

import pytest
from click.testing import CliRunner
from server_support import tiny_llama

from promptcache.cli import main

INSTALL = "pip install 'promptcache[backend]'"


@pytest.mark.parametrize("args", [["serve", "--port", "0"], ["verify", "TRACE", "--backend", "local"], ["demo"]])
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


def engine_commands(model: str, trace) -> list[list[str]]:
    """The three commands that load a model, each given ``--model model``."""
    return [["serve", "--port", "0", "--model", model], ["demo", "--model", model],
            ["verify", str(trace), "--model", model]]


@pytest.mark.parametrize("kind", ["missing", "not a model", "a file"])
def test_a_model_that_cannot_be_loaded_is_a_usage_error_with_one_message(tmp_path, traces_dir, kind):
    # refused before any weight is read: no model is loaded here, the embedded one neither
    folder = tmp_path / "folder"
    if kind == "not a model":
        folder.mkdir()
        (folder / "notes.txt").write_text("not a model")
        (folder / "config.json").write_text('{"hidden_size": 8}')
    elif kind == "a file":
        folder.write_text("{}")
    expected = {
        "missing": f"model directory {folder} does not exist; pass a local transformers model folder, or omit "
                   "--model for the embedded model",
        "not a model": f"{folder} is not a transformers model folder (no config.json with model_type); pass a "
                       "folder saved with save_pretrained, or omit --model for the embedded model",
        "a file": f"{folder} is a file, not a model folder; pass a folder saved with save_pretrained, or omit "
                  "--model for the embedded model",
    }[kind]
    for command in engine_commands(str(folder), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, command)
        assert (result.exit_code, result.output) == (2, f"Error: {expected}\n"), command


def test_a_model_folder_without_a_tokenizer_says_to_pass_one(tmp_path, traces_dir):
    tiny_llama().save_pretrained(tmp_path)
    for command in engine_commands(str(tmp_path), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, result.output
        assert f"{tmp_path} holds no tokenizer" in result.output and "--tokenizer chatml" in result.output


def test_a_tokenizer_folder_that_holds_no_tokenizer_is_a_usage_error(tmp_path, traces_dir):
    for command in engine_commands(str(tmp_path), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, [*command[:-2], "--tokenizer", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert f"Error: {tmp_path} holds no tokenizer (none of tokenizer.json" in result.output


@pytest.fixture(scope="module")
def saved_llama(tmp_path_factory):
    """A tiny random Llama saved with ``save_pretrained`` (no tokenizer: run it with ``--tokenizer chatml``)."""
    folder = tmp_path_factory.mktemp("llama")
    tiny_llama().save_pretrained(folder)
    return folder


def broken_copy(saved_llama, tmp_path, kind: str):
    """A copy of ``saved_llama`` that ``from_pretrained`` cannot load, and the error transformers gives."""
    folder = tmp_path / kind
    shutil.copytree(saved_llama, folder)
    if kind == "garbage weights":
        (folder / "model.safetensors").write_bytes(b"not a safetensors file " * 64)
        return folder, "SafetensorError: Error while deserializing header: header too large"
    config = json.loads((folder / "config.json").read_text())
    config["hidden_size"] = 32  # the weights are 16 wide
    (folder / "config.json").write_text(json.dumps(config))
    return folder, "RuntimeError: You set `ignore_mismatched_sizes` to `False`, thus raising an error."


@pytest.mark.parametrize("kind", ["garbage weights", "config not matching the weights"])
def test_a_model_folder_transformers_cannot_load_is_a_usage_error_naming_its_error(saved_llama, tmp_path, traces_dir,
                                                                                    kind):
    folder, error = broken_copy(saved_llama, tmp_path, kind)
    for command in engine_commands(str(folder), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, [*command, "--tokenizer", "chatml"])
        assert result.exit_code == 2, (command, result.output, result.exception)
        assert f"Error: cannot load the model in {folder}: {error}" in result.output, command
        assert "Traceback" not in result.output


def test_a_broken_tokenizer_is_a_usage_error_naming_its_error(saved_llama, tmp_path, traces_dir):
    model = tmp_path / "model"
    shutil.copytree(saved_llama, model)
    (model / "tokenizer.json").write_text("{}")  # JSON, but no tokenizer
    tokenizer = tmp_path / "tokenizer"
    tokenizer.mkdir()
    (tokenizer / "tokenizer.json").write_text("{}")
    for command in engine_commands(str(model), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, command)  # the model folder's own tokenizer
        assert result.exit_code == 2, (command, result.output, result.exception)
        assert result.output == (f"Error: cannot load the tokenizer in {model} (pass --tokenizer chatml or "
                                 "--tokenizer PATH to use another): KeyError: 'added_tokens'\n"), command
        result = CliRunner().invoke(main, [*command[:-2], "--tokenizer", str(tokenizer)])  # --tokenizer DIR
        assert result.exit_code == 2, (command, result.output, result.exception)
        assert result.output == (f"Error: cannot load a tokenizer from {tokenizer} (give a folder saved with "
                                 "save_pretrained, or 'chatml'): KeyError: 'added_tokens'\n"), command


def test_a_port_in_use_is_refused_before_the_model_loads(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # importing torch would now fail: the bind must come first
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--port", str(port)])
    # one line, exit 2: no model line, no base_url, no uvicorn startup (the model never loaded)
    assert (result.exit_code, result.output) == (
        2, f"Error: cannot listen on 127.0.0.1:{port}: address already in use; pick another --port\n")


def test_an_address_this_machine_does_not_have_is_refused_naming_the_host_option():
    result = CliRunner().invoke(main, ["serve", "--host", "192.0.2.1", "--port", "0"])  # TEST-NET-1: never local
    assert (result.exit_code, result.output) == (
        2, "Error: cannot listen on 192.0.2.1:0: this machine has no such address; pick another --host\n")


def test_a_tokenizer_with_ids_past_the_model_embedding_is_refused_at_load(tmp_path, traces_dir):
    tiny_llama(vocab=1000).save_pretrained(tmp_path)  # 1,000 embedding rows; cl100k + ChatML has 100,266 ids
    expected = (f"Error: the tokenizer cl100k_chatml uses token ids past the 1,000 embedding rows of the model "
                f"{tmp_path} (ids 0-999) in every request: 78191 (chat template), 100264 (chat template), 100265 (eos "
                "token); every request would be refused. Use the model's own tokenizer (omit --tokenizer) or one with "
                "the model's vocabulary\n")
    for command in engine_commands(str(tmp_path), traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, [*command, "--tokenizer", "chatml"])
        assert (result.exit_code, result.output) == (2, expected), command


BAD_MODEL_VALUES = {
    "config.json not JSON": "{folder}/config.json is not valid JSON (Expecting property name enclosed in double quotes: "
                            "line 1 column 2 (char 1)); fix it, or save the model again with save_pretrained",
    "empty": "--model is empty; pass a local transformers model folder, or omit --model for the embedded model",
    "a Hub id": "model directory {folder} does not exist; pass a local transformers model folder, or omit --model for "
                "the embedded model. Model names from the Hugging Face Hub are not downloaded; download it first (hf "
                "download {folder} --local-dir {folder}; huggingface-cli download with huggingface_hub < 1.0) and "
                "pass the folder",
}


def bad_model_value(tmp_path, monkeypatch, kind: str) -> tuple[str, str]:
    """A ``--model`` value of ``kind`` and the message it gets."""
    monkeypatch.chdir(tmp_path)  # the current folder holds no model: '' must not be read as '.'
    folder = {"config.json not JSON": str(tmp_path / "m"), "empty": "", "a Hub id": "Org/no-such-model-1.5B"}[kind]
    if kind == "config.json not JSON":
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text("{not json")
    return folder, BAD_MODEL_VALUES[kind].format(folder=folder)


@pytest.mark.parametrize("kind", sorted(BAD_MODEL_VALUES))
def test_a_bad_model_value_gets_a_message_naming_what_is_wrong(tmp_path, monkeypatch, traces_dir, kind):
    folder, expected = bad_model_value(tmp_path, monkeypatch, kind)
    for command in engine_commands(folder, traces_dir / "bad_sliding_window.jsonl"):
        result = CliRunner().invoke(main, command)
        assert (result.exit_code, result.output) == (2, f"Error: {expected}\n"), command


@pytest.mark.parametrize("kind", sorted(BAD_MODEL_VALUES))
def test_serve_and_demo_check_the_model_value_before_importing_torch(tmp_path, monkeypatch, kind):
    folder, expected = bad_model_value(tmp_path, monkeypatch, kind)
    monkeypatch.setitem(sys.modules, "torch", None)  # importing torch would now fail: the check must come first
    for command in (["serve", "--port", "0", "--model", folder], ["demo", "--model", folder]):
        result = CliRunner().invoke(main, command)
        assert (result.exit_code, result.output) == (2, f"Error: {expected}\n"), command


@pytest.mark.parametrize("value, expected", [
    ("", "--tokenizer is empty; give 'chatml' or a tokenizer folder saved with save_pretrained"),
    ("gpt2", "tokenizer directory gpt2 does not exist (give a local folder or 'chatml'). Model names from the Hugging "
             "Face Hub are not downloaded; download it first (hf download gpt2 --local-dir gpt2; huggingface-cli "
             "download with huggingface_hub < 1.0) and pass the folder"),
])
def test_a_bad_tokenizer_value_is_refused_before_importing_torch(tmp_path, monkeypatch, value, expected):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "torch", None)
    for command in (["serve", "--port", "0", "--tokenizer", value], ["demo", "--tokenizer", value]):
        result = CliRunner().invoke(main, command)
        assert (result.exit_code, result.output) == (2, f"Error: {expected}\n"), command
