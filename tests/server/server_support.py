"""Starting ``promptcache serve`` in a subprocess on a loopback port, and reading its ``/metrics``.

A uniquely named module (not ``conftest``/``helpers``) so test files import it
unambiguously whichever test folders pytest puts on ``sys.path``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
from transformers import LlamaConfig, LlamaForCausalLM

from local_backend.embedded import EMBEDDED_VOCAB
from local_backend.oracle import PrefixTrieOracle

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 120.0
MAX_MODEL_LEN = 2048
"""``--max-model-len`` of the test server: an oversize prompt is cheap to send."""
BLOCK = 16
HEADER = "x-promptcache-cached-tokens"
SERVED_NAMES = ("promptcache-test", "gpt-4.1-mini", "claude-sonnet-4-6")
"""The names the test server accepts (``--served-model-name``); anything else gets a 404."""


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """``promptcache serve ARGS`` on 127.0.0.1:PORT, its log in ``log_path``."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        command = [sys.executable, "-m", "promptcache.cli", "serve", "--port", str(self.port),
                   "--log-level", "warning", *args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=env)

    def wait_ready(self) -> None:
        """Poll ``/health`` until it answers 200; fail with the server log if the process dies or hangs."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"promptcache serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"promptcache serve did not become ready in {STARTUP_TIMEOUT_S:.0f} s:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


def metrics(url: str) -> dict[str, float]:
    """``/metrics`` as ``{"name{labels}": value}`` (sample lines only)."""
    return parse_metrics(httpx.get(f"{url}/metrics", timeout=30).text)


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text as ``{"name{labels}": value}`` (sample lines only)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def metric(samples: dict[str, float], name: str) -> float:
    """The value of the one sample of ``name`` (any labels); 0.0 when absent."""
    values = [v for k, v in samples.items() if k == name or k.startswith(name + "{")]
    assert len(values) <= 1, f"{name} has several samples: {values}"
    return values[0] if values else 0.0


def unique_system(words: int = 120) -> str:
    """A system prompt no other test shares (a fresh nonce first), ``words`` words long."""
    nonce = uuid.uuid4().hex
    body = " ".join(f"rule{i} keep answers short and cite the order number" for i in range(words // 9 + 1))
    return f"Session {nonce}. You are the support agent of an outdoor shop. {body}"


def oracle_hit(earlier: list[list[int]], ids: list[int]) -> int:
    """Block-aligned best hit for ``ids`` after the ``earlier`` prompts ran with one output token each.

    The oracle (:class:`local_backend.oracle.PrefixTrieOracle`) shares no code with the block manager.
    """
    oracle = PrefixTrieOracle(BLOCK)
    for prompt in earlier:
        oracle.record(prompt, [0])
    return oracle.hit_tokens(ids)


def anthropic_expected(prompt_tokens: int, hit: int, last_breakpoint: int | None) -> dict[str, int]:
    """Anthropic usage from the engine hit, as the design doc's "Server" section defines it, written out for tests."""
    if last_breakpoint is None:
        return {"cache_read_input_tokens": hit, "cache_creation_input_tokens": 0, "input_tokens": prompt_tokens - hit}
    read = min(hit, last_breakpoint)
    creation = max(last_breakpoint - read, 0)
    return {"cache_read_input_tokens": read, "cache_creation_input_tokens": creation,
            "input_tokens": prompt_tokens - read - creation}


def tiny_llama(cls: type[LlamaForCausalLM] = LlamaForCausalLM, context: int = 4096,
               vocab: int = EMBEDDED_VOCAB) -> LlamaForCausalLM:
    """A tiny random ``cls`` (1 layer, width 16, ``context`` positions) with the embedded model's vocabulary (or
    ``vocab`` ids) and no end-of-sequence token: served with the ChatML tokenizer, it generates exactly
    ``max_tokens`` and costs milliseconds."""
    config = LlamaConfig(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=context,
                         tie_word_embeddings=True, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    config._attn_implementation = "sdpa"
    return cls(config).eval()
