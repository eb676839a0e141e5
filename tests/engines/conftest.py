"""``verify`` against llama.cpp's ``llama-server``, for real: run by ``make test-engines``, which builds the server
(``build_llama_server.sh``), exports the embedded model (``export_gguf.py``) and names both in
``$PROMPTCACHE_LLAMA_SERVER`` and ``$PROMPTCACHE_GGUF``. Without them (plain ``make test``) every test here is
skipped with that advice.
"""

from __future__ import annotations

import os

import pytest
from llama_support import available


def pytest_collection_modifyitems(config, items):
    if available():
        return
    skip = pytest.mark.skip(reason="llama-server not built: run `make test-engines`")
    for item in items:
        if "tests/engines/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)
