"""The line of application code that made an SDK call, found from the stack inside the HTTP client.

The SDKs call their HTTP client's ``send`` in the caller's thread (sync) or
task (async: the awaiting coroutines are the frames above), so the first frame
outside the SDKs, their HTTP stack, the event loop and promptcache is the
application's call: ``agent.py:88``. The wrappers' guard compares each call
site with its own earlier requests, so an app's two prompts (a router and an
answerer) are not breaks of each other.
"""

from __future__ import annotations

import os
import sys

__all__ = ["call_site"]

_LIBRARY_MODULES = ("anthropic", "openai", "httpx2", "httpx", "httpcore", "h11", "h2", "anyio", "sniffio",
                    "asyncio", "concurrent", "contextlib", "functools", "threading", "trio", "promptcache")


def _library(module: str) -> bool:
    return module.split(".", 1)[0] in _LIBRARY_MODULES


def call_site(depth: int = 1) -> tuple[str, int] | None:
    """``(file, line)`` of the innermost caller outside the libraries, the file relative to the working
    folder when it lies under it; None when every frame is a library's (a call from the SDK itself)."""
    frame = sys._getframe(depth)
    while frame is not None:
        if not _library(frame.f_globals.get("__name__", "")):
            filename = frame.f_code.co_filename
            try:
                relative = os.path.relpath(filename)
            except ValueError:  # another drive (Windows)
                relative = filename
            return (filename if relative.startswith("..") else relative), frame.f_lineno
        frame = frame.f_back
    return None
