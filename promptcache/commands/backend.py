"""What the commands that run the local engine share (``serve``, ``verify --backend local``, ``demo``): the check
that the ``backend`` extra is installed, and the one path by which a model that cannot be loaded becomes a usage
error (exit 2, the same message from every command).

Nothing here imports torch: the checks run before the engine loads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any
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


def require_backend(modules: tuple[str, ...] = SERVER_MODULES, what: str = "the local backend",
                    extra: str = "backend") -> None:
    """Import ``modules`` or stop with a message naming the install command of ``extra``.

    Raises:
        BackendMissing: a module is not installed.
    """
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise BackendMissing(f"{what} needs the {extra} extra ({name} is not installed: {exc}). "
                                 f"Install it with: pip install 'promptcache[{extra}]'") from None


def check_model_options(model: str | None, tokenizer: str | None) -> None:
    """Refuse a ``--model`` / ``--tokenizer`` that cannot be loaded wherever that shows without torch, before the
    seconds its import costs: an empty value, a missing path (a Hub id gets the download command), a file, a
    ``config.json`` that is missing, not valid JSON or without ``model_type``, a folder without tokenizer files
    (see :mod:`local_backend.model_folder`). What needs transformers is checked again when the model loads.

    Raises:
        ModelUnusable: one of these; its message is the check's.
    """
    from local_backend.errors import ModelLoadError
    from local_backend.model_folder import check_model_options as check  # torch-free

    try:
        check(model, tokenizer)
    except ModelLoadError as exc:
        raise ModelUnusable(str(exc)) from exc


@contextmanager
def loading_model(console: Console) -> Iterator[None]:
    """Show "loading the model" on ``console`` while the block builds the engine; stop with exit 2 if it cannot.

    The engine's loader (``local_backend.loader.build_engine``) raises a ``ModelLoadError`` (a
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


def engine_option(command: Any) -> Any:
    """The ``--engine`` option of the commands that replay on a URL (``verify``, ``report --backend``): the
    choices are :data:`promptcache.verify.engines.ENGINE_NAMES`."""
    from promptcache.verify.engines import ENGINE_NAMES

    return click.option("--engine", type=click.Choice(ENGINE_NAMES), default=None,
                        help="URL: the server's engine ('openai' = any other OpenAI-compatible server) [default: "
                             "detected from its /v1/models and routes].")(command)


@contextmanager
def opening_backend(backend: str, console: Console) -> Iterator[None]:
    """A status line while ``verify``'s backend is made (:func:`promptcache.verify.make_backend`), and its
    failures as exit 2: the local engine's as :func:`loading_model`; a URL's (unreachable, a refused key, the
    ``openai`` client missing) as ``error: cannot use backend URL: ...``.

    Raises:
        ModelUnusable: the local engine cannot be built.
        SystemExit: code 2, the URL cannot be used (the message is printed on ``console``).
    """
    if backend == "local":
        with loading_model(console):
            yield
        return
    from promptcache.verify.backends import BackendError

    try:
        with console.status("connecting to the backend"):
            yield
    except ImportError as exc:
        console.print(f"error: {exc}", markup=False)
        sys.exit(2)
    except (ValueError, OSError, BackendError) as exc:
        console.print(f"error: cannot use backend {backend}: {exc}", markup=False)
        sys.exit(2)
