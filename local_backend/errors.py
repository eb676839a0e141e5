"""Errors the engine raises for bad input and refused operations.

Every input error is a :class:`ValueError` subclass raised by ``add_request`` /
``generate`` *before* the request enters the scheduler, so a rejected request
never disturbs the others: the engine keeps serving. The server maps
:class:`InvalidRequestError` to a provider-shaped HTTP 400.

A model or tokenizer that cannot be loaded is a :class:`ModelLoadError` (also a
``ValueError``), raised when the engine is built.
"""

from __future__ import annotations


class InvalidRequestError(ValueError):
    """A request the engine cannot serve as given (the message says what to change)."""


class InvalidBodyError(InvalidRequestError):
    """A chat request body the provider's API would refuse (:mod:`local_backend.chat_template`); the message is
    worded as the provider words it, ``param`` names the field (OpenAI's ``param``) when known."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param = message, param


class EmptyPromptError(InvalidRequestError):
    """The prompt has no tokens; send at least one token."""


class PromptTooLongError(InvalidRequestError):
    """The prompt alone does not fit the model's context or the KV block pool.

    Only the prompt is checked, as in vLLM's engine: ``max_tokens`` may reach
    past the limit, and generation then stops there with
    ``finish_reason="length"`` (an OpenAI-compatible server may clamp
    ``max_tokens`` to the room left instead).
    """


class OutOfVocabularyError(InvalidRequestError):
    """A prompt token id is negative or not below the model's vocabulary size."""


class InvalidSamplingParamsError(InvalidRequestError):
    """A sampling parameter is out of range (temperature < 0, top_p outside (0, 1], ...)."""


class DuplicateRequestError(InvalidRequestError):
    """A request with this id is already waiting or running; use a fresh id."""


class ModelLoadError(ValueError):
    """A model or tokenizer named by a path cannot be loaded (the message names the path and what to pass)."""


class ModelNotFoundError(ModelLoadError, FileNotFoundError):
    """The model or tokenizer path does not exist (a :class:`ModelLoadError` and a ``FileNotFoundError``)."""


class VocabularyWarning(UserWarning):
    """The tokenizer holds token ids past the model's input embedding that no request needs (added tokens the
    model was not trained with); the model is served, and a prompt holding one of them is refused."""
