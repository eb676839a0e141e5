"""Incremental detokenization for streaming, with stop strings (OpenAI ``stop``, Anthropic ``stop_sequences``).

Token ids arrive one step at a time; text is sent as soon as it is final:

* a trailing U+FFFD (the first bytes of a multi-byte character whose rest is
  in the next token) is held back until the character completes;
* the last ``len(longest stop string) - 1`` characters are held back while
  they could still be the start of a stop string; when a stop string appears,
  the text ends right before it (it is not sent, as the providers do).

Decoding re-decodes all output ids each step (vLLM's simple path): output
lengths here are small, and it is exact for any tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence

from local_backend.tokenizer import EngineTokenizer


class IncrementalDetokenizer:
    """Turns output token ids into text deltas.

    Args:
        tokenizer: the engine's tokenizer.
        stop: stop strings (empty strings are ignored).
    """

    def __init__(self, tokenizer: EngineTokenizer, stop: Sequence[str] = ()) -> None:
        self.tokenizer = tokenizer
        self.stop = tuple(s for s in stop if s)
        self._hold = max((len(s) for s in self.stop), default=1) - 1
        self.token_ids: list[int] = []
        self.text = ""  # everything decoded so far, up to a stop string
        self.sent = 0  # characters of ``text`` already returned
        self.stop_string: str | None = None

    def add(self, token_ids: Sequence[int]) -> str:
        """Append ``token_ids``; return the newly final text (may be empty).

        Once a stop string has matched (:attr:`stop_string` set), further calls return "".
        """
        if self.stop_string is not None:
            return ""
        self.token_ids.extend(token_ids)
        text = self.tokenizer.decode(self.token_ids)
        matches = [(at, stop) for stop in self.stop if (at := text.find(stop, max(0, self.sent - self._hold))) != -1]
        if matches:
            at, self.stop_string = min(matches)
            self.text = text[:at]
            return self._take(at)
        self.text = text
        final = len(text) - self._hold
        while final > self.sent and text[final - 1] == "\ufffd":
            final -= 1
        return self._take(final)

    def flush(self) -> str:
        """The held-back text, once generation has ended."""
        return self._take(len(self.text))

    def _take(self, end: int) -> str:
        if end <= self.sent:
            return ""
        out, self.sent = self.text[self.sent:end], end
        return out
