"""What the commands that run the local engine share (``serve``, ``verify --backend local``, ``demo``): the check
that the ``backend`` extra is installed, and the one path by which a model that cannot be loaded becomes a usage
error (exit 2, the same message from every command).

Nothing here imports torch: the checks run before the engine loads.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import click
from rich.console import Console

BACKEND_INSTALL = "pip install 'promptcache[backend]'"
SERVER_MODULES = ("torch", "transformers", "fastapi", "uvicorn", "prometheus_client")
ENGINE_MODULES = ("torch", "transformers")


class BackendMissing(click.ClickException):
    """The ``backend`` extra is not installed (exit code 2, like other usage errors)."""

    exit_code = 2


class ModelUnusable(click.ClickException):
    """``--model`` / ``--tokenizer`` (or an engine option) cannot be used: exit code 2, like other usage errors."""

    exit_code = 2


def require_backend(modules: tuple[str, ...] = SERVER_MODULES, what: str = "the local backend") -> None:
    """Import ``modules`` or stop with a message naming the install command.

    Raises:
        BackendMissing: a module is not installed.
    """
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise BackendMissing(f"{what} needs the backend extra ({name} is not installed: {exc}). "
                                 f"Install it with: {BACKEND_INSTALL}") from None


@contextmanager
def loading_model(console: Console) -> Iterator[None]:
    """Show "loading the model" on ``console`` while the block builds the engine; stop with exit 2 if it cannot.

    The engine's loader (``local_backend.server.run.build_engine``) raises a ``ModelLoadError`` (a
    ``ValueError``) whose message names the path and what to pass instead, for every failure of
    transformers' ``from_pretrained`` too (corrupt weights, a config that does not match them, a broken
    tokenizer, a package the tokenizer needs); a bad engine option is a ``ValueError`` too.

    Raises:
        ModelUnusable: the block raised ``ValueError``, ``OSError`` or ``ImportError``; its message is the error's.
    """
    try:
        with console.status("loading the model"):
            yield
    except (ValueError, OSError, ImportError) as exc:
        raise ModelUnusable(str(exc)) from exc
