"""``promptcache serve`` stopped with Ctrl-C (SIGINT) or SIGTERM once serving: a graceful shutdown, exit 0 (uvicorn
would re-raise the signal: ``Aborted!`` exit 1, or 143). The start-up lines it prints itself are checked on the way."""

from __future__ import annotations

import signal

from server_support import ServerProcess, tiny_llama
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

from local_backend.embedded import EMBEDDED_VOCAB


def test_ctrl_c_and_sigterm_after_start_up_shut_down_with_exit_0(tmp_path):
    model, tokenizer = tmp_path / "model", tmp_path / "tokenizer"
    tiny_llama().save_pretrained(model)  # 100,266 embedding rows: loads in a moment
    vocab = {"<unk>": 0, "</s>": 1, "w": 2, "<unused>": EMBEDDED_VOCAB + 10}  # one id past the embedding, unused
    PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<unk>")),
                            unk_token="<unk>", eos_token="</s>").save_pretrained(tokenizer)
    args = ["--model", str(model), "--tokenizer", str(tokenizer), "--kv-cache-mb", "8"]
    servers = {sig: ServerProcess(args, tmp_path / f"{sig.name}.log") for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for sig, server in servers.items():  # both load at once: one wait
            server.wait_ready()
            log = server.log()
            assert f"listening on {server.url} (Ctrl-C to stop)\n" in log, log
            assert (f"\nwarning: the tokenizer {tokenizer} has 1 token id past the 100,266 embedding rows of the model "
                    f"{model} (added tokens the model has no embedding for); ") in log, log
            assert f"\nOpenAI base_url {server.url}/v1  Anthropic base_url {server.url}\n" in log, log
            server.process.send_signal(sig)
        for sig, server in servers.items():
            assert server.process.wait(timeout=30) == 0, (sig.name, server.log())
            assert "Aborted!" not in server.log() and "Traceback" not in server.log(), server.log()
    finally:
        for server in servers.values():
            server.stop()
