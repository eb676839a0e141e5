"""Starting llama.cpp's ``llama-server`` for the engine tests (``$PROMPTCACHE_LLAMA_SERVER``, ``$PROMPTCACHE_GGUF``,
set by ``make test-engines``). A uniquely named module so test files import it unambiguously."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

SERVER = os.environ.get("PROMPTCACHE_LLAMA_SERVER")
GGUF = os.environ.get("PROMPTCACHE_GGUF")
START_TIMEOUT_S = 180


def available() -> bool:
    """The server binary and the GGUF are both there."""
    return bool(SERVER and GGUF and Path(SERVER).is_file() and Path(GGUF).is_file())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(*flags: str, log: Path):
    """``llama-server -m GGUF --host 127.0.0.1 --port P FLAGS...``; yields its URL once /health answers 200."""
    port = free_port()
    command = [SERVER, "-m", GGUF, "--host", "127.0.0.1", "--port", str(port), "--threads", "2", "--jinja",
               "--no-warmup", *flags]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama-server exited {process.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server not ready after {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def read_table(path: Path, columns: tuple[str, ...], notes: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """The rows of a table written by the engine tests (``| trace | COLUMNS... |`` lines, then ``- trace: NOTE:
    text`` lines): trace -> {key: text}, empty cells left out; ``{}`` when there is no such file."""
    rows: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return rows
    for line in path.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == len(columns) + 1 and cells[0].endswith(".jsonl"):
            rows.setdefault(cells[0], {}).update({k: v for k, v in zip(columns, cells[1:]) if v})
        elif line.startswith("- ") and ": " in line:
            name, _, rest = line[2:].partition(": ")
            key, _, text = rest.partition(": ")
            if key in notes:
                rows.setdefault(name, {})[key] = text
    return rows
