"""Checks of ``--model`` / ``--tokenizer`` paths that need no torch: run before the seconds its import takes.

A model folder is what ``save_pretrained`` writes: a ``config.json`` naming
its ``model_type``, the weights and (unless a tokenizer is given) tokenizer
files. Nothing is downloaded: a name from the Hugging Face Hub that is not a
local folder is refused with the command that downloads it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from local_backend.errors import ModelLoadError, ModelNotFoundError

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")
"""Files of a transformers tokenizer; a model folder with none of them needs a tokenizer given separately."""

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
"""``name`` or ``owner/name``: how a Hugging Face Hub repository id is written."""

_OMIT_MODEL = "or omit --model for the embedded model"


def hub_hint(spec: str) -> str:
    """The sentence added to "does not exist" when ``spec`` reads like a Hub repository id, else ``""``."""
    if not _HUB_ID.fullmatch(spec):
        return ""
    return (f". Model names from the Hugging Face Hub are not downloaded; download it first (hf download {spec} "
            f"--local-dir {spec}; huggingface-cli download with huggingface_hub < 1.0) and pass the folder")


def model_path(spec: str | Path) -> Path:
    """``spec`` (``--model``) as a path, refusing an empty one (``Path("")`` would be the current folder).

    Raises:
        ModelLoadError: ``spec`` is empty or blank.
    """
    if isinstance(spec, str) and not spec.strip():
        raise ModelLoadError(f"--model is empty; pass a local transformers model folder, {_OMIT_MODEL}")
    return Path(spec).expanduser()


def check_model_folder(path: Path, needs_tokenizer: bool = True, spec: str | None = None) -> None:
    """Refuse ``path`` unless it looks like a folder written by ``save_pretrained``, before anything loads.

    Args:
        path: the model folder.
        needs_tokenizer: the folder must hold a tokenizer too (no tokenizer was given).
        spec: ``path`` as the user wrote it, to recognise a Hub id (default: ``str(path)``).

    Raises:
        ModelNotFoundError: ``path`` does not exist (with the download command when it reads like a Hub id).
        ModelLoadError: ``path`` is a file; its ``config.json`` is missing, not valid JSON (the parser's message
            is quoted), not a JSON object or has no ``model_type``; or (with ``needs_tokenizer``) it holds none of
            :data:`TOKENIZER_FILES`. The message says what to pass instead.
    """
    if not path.exists():
        raise ModelNotFoundError(f"model directory {path} does not exist; pass a local transformers model folder, "
                                 f"{_OMIT_MODEL}{hub_hint(spec if spec is not None else str(path))}")
    if not path.is_dir():
        raise ModelLoadError(f"{path} is a file, not a model folder; pass a folder saved with save_pretrained, "
                             f"{_OMIT_MODEL}")
    config = path / "config.json"
    try:
        model_type = json.loads(config.read_bytes()).get("model_type")
    except FileNotFoundError:
        model_type = None
    except OSError as exc:
        raise ModelLoadError(f"cannot read {config}: {exc.strerror}") from exc
    except ValueError as exc:  # not JSON, or not UTF-8
        raise ModelLoadError(f"{config} is not valid JSON ({exc}); fix it, or save the model again with "
                             "save_pretrained") from exc
    except AttributeError:  # JSON, but not an object
        model_type = None
    if not model_type:
        raise ModelLoadError(f"{path} is not a transformers model folder (no config.json with model_type); pass a "
                             f"folder saved with save_pretrained, {_OMIT_MODEL}")
    if needs_tokenizer and not any((path / name).exists() for name in TOKENIZER_FILES):
        raise ModelLoadError(f"{path} holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}). Pass --tokenizer "
                             "chatml if the model uses the embedded model's vocabulary (cl100k + ChatML), or "
                             "--tokenizer PATH to a tokenizer folder.")


def check_tokenizer_folder(spec: str) -> Path:
    """``--tokenizer`` (other than ``chatml``) as a folder holding tokenizer files, before anything loads.

    Raises:
        ModelNotFoundError: the folder does not exist (with the download command when it reads like a Hub id).
        ModelLoadError: ``spec`` is empty, or the folder holds none of :data:`TOKENIZER_FILES`.
    """
    if not spec.strip():
        raise ModelLoadError("--tokenizer is empty; give 'chatml' or a tokenizer folder saved with save_pretrained")
    folder = Path(spec).expanduser()
    if not folder.exists():
        raise ModelNotFoundError(f"tokenizer directory {spec} does not exist (give a local folder or 'chatml')"
                                 f"{hub_hint(spec)}")
    if not any((folder / name).exists() for name in TOKENIZER_FILES):
        raise ModelLoadError(f"{spec} holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}); give a folder "
                             "saved with save_pretrained, or 'chatml'")
    return folder


def check_model_options(model: str | None, tokenizer: str | None) -> None:
    """Every check of ``--model`` and ``--tokenizer`` that reads no weights, for a command to run before importing
    torch (``None``: the embedded model / the model's own tokenizer).

    Raises:
        ModelLoadError: see :func:`model_path`, :func:`check_model_folder` and :func:`check_tokenizer_folder`.
    """
    if model is not None:
        check_model_folder(model_path(model), needs_tokenizer=tokenizer is None, spec=model)
    if tokenizer is not None and tokenizer != "chatml":
        check_tokenizer_folder(tokenizer)
