"""Checking, before any work is done, that an output file can be written: one check for every writer.

``promptcache lint -o``, ``engine-bench --json`` and the trace a wrapped client
records (:func:`promptcache.trace.recorder.check_trace_path`) all refuse a path
they could only fail on after the work (a lint run, a benchmark, a paid
request): a missing folder, a file where a folder should be, a folder given as
the file, a place that is not writable. Nothing is created here: a mistyped
folder is reported, not made. Standard library only (no torch, no libcst).
"""

from __future__ import annotations

import os

__all__ = ["check_writable_file"]


def check_writable_file(path: str | os.PathLike[str]) -> None:
    """Check that a file can be written (created or replaced, or appended to) at ``path``; create nothing.

    The folder of ``path`` must exist, be a folder and be writable; ``path``
    must not be a folder, and an existing file must be writable. The file need
    not exist. ``path`` is taken as given (a ``~`` is not expanded: the caller
    expands it if it means the home folder).

    Raises:
        FileNotFoundError: ``the folder F does not exist; create it first (nothing is created for you) or pass
            a path inside an existing folder``.
        NotADirectoryError: ``F is a file, not a folder; pass a path inside a folder`` (F: the folder part).
        IsADirectoryError: ``it is a folder; pass a file path inside it``.
        PermissionError: ``F is not writable; pass a path you can write to`` (F: the existing file, or
            ``the folder F`` for a new one).

        Each message says why and what to do, without the path itself: callers put it first
        (``cannot write PATH: ...``).
    """
    full = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(full)
    if os.path.isdir(full):
        raise IsADirectoryError("it is a folder; pass a file path inside it")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise NotADirectoryError(f"{folder} is a file, not a folder; pass a path inside a folder")
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"the folder {folder} does not exist; create it first (nothing is created for you) "
                                "or pass a path inside an existing folder")
    exists = os.path.exists(full)
    if not os.access(folder, os.W_OK | os.X_OK) or (exists and not os.access(full, os.W_OK)):
        what = full if exists else f"the folder {folder}"
        raise PermissionError(f"{what} is not writable; pass a path you can write to")
