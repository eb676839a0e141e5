"""``bind_listener``: the socket ``promptcache serve`` opens before the model loads listens at once, so a second
``serve`` on the same port is refused then rather than crashing in uvicorn after its own load."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from server_support import free_port, tiny_llama

from local_backend.server.listen import ListenError, bind_listener
from promptcache.cli import main


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_second_listener_on_the_same_port_is_refused_while_the_first_is_open(host):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        first = bind_listener(host, 0)
    except ListenError as exc:  # a machine without IPv6 loopback
        pytest.skip(str(exc))
    with first:
        port = first.getsockname()[1]
        # on Linux two SO_REUSEADDR sockets may both bind one address while neither listens: the first listens
        with pytest.raises(ListenError) as refused:
            bind_listener(host, port)
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        assert str(refused.value) == f"cannot listen on {shown}:{port}: address already in use; pick another --port"
        with socket.create_connection((host, port), timeout=5):  # the kernel queues it: the first one listens
            pass
    bind_listener(host, port).close()  # closed: the port is free again


def test_a_failed_model_load_closes_the_listening_socket(tmp_path):
    tiny_llama(vocab=1000).save_pretrained(tmp_path)  # refused at load: ChatML's template ids are past 1,000
    port = free_port()
    result = CliRunner().invoke(main, ["serve", "--port", str(port), "--model", str(tmp_path), "--tokenizer", "chatml"])
    assert result.exit_code == 2 and "past the 1,000 embedding rows" in result.output
    bind_listener("127.0.0.1", port).close()  # a socket left open and listening would refuse this
