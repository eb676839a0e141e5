"""Fixtures of the server tests: one ``promptcache serve`` subprocess (embedded model) and clients for it.

The server restricts model names to ``server_support.SERVED_NAMES`` (so a
refused name can be tested against the same server) and caps the context at
2,048 tokens (so an oversize prompt is cheap to send). Tests use unique
system prompts (:func:`server_support.unique_system`) so they never hit each
other's cached blocks, whatever order they run in.
"""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest
from server_support import MAX_MODEL_LEN, SERVED_NAMES, ServerProcess


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Base URL of a running ``promptcache serve`` (embedded model, 64 MiB KV pool)."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    args = ["--kv-cache-mb", "64", "--max-model-len", str(MAX_MODEL_LEN)]
    for name in SERVED_NAMES:
        args += ["--served-model-name", name]
    process = ServerProcess(args, log)
    try:
        process.wait_ready()
        yield process.url
    finally:
        process.stop()


@pytest.fixture(scope="session")
def openai_client(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server}/v1", api_key="test-key", max_retries=0, timeout=120)


@pytest.fixture(scope="session")
def anthropic_client(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server, api_key="test-key", max_retries=0, timeout=120)


@pytest.fixture(scope="session")
def tokenize(server):
    """``tokenize(messages, tools=None)``: the server's own token ids for an OpenAI chat body (``/tokenize``)."""
    def run(messages, tools=None, add_generation_prompt=True):
        body = {"messages": messages, "add_generation_prompt": add_generation_prompt}
        if tools:
            body["tools"] = tools
        response = httpx.post(f"{server}/tokenize", json=body, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()["tokens"]
    return run
