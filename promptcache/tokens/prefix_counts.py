"""Token counts of a message cut at several points, from one tokenisation of the whole message.

The breakpoint planner needs the tokens of the system message cut after each
stable layer (system, then system + documents, ...). Tokenising each cut
would tokenise the long layers once per later layer. A BPE tokenizer of the
tiktoken kind first splits the text into *pieces* with its regular
expression, then encodes each piece on its own, so the tokens of a prefix are
the whole text's tokens for the pieces that lie safely before the cut, plus
the tokens of the few characters after them. "Safely" means the piece before
the one holding the cut's last character: the regular expression looks one
character ahead at most, so pieces ending there split the same way in the
prefix (tested against the direct count in ``tests/tokens``).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence

import regex
import tiktoken

from promptcache.tokens.chatml import FRAMING_TOKENS, chatml_encoding, encode_message


@functools.cache
def _pieces_pattern(pat_str: str) -> regex.Pattern:
    return regex.compile(pat_str)


def cut_message_tokens(role: str, text: str, cuts: Sequence[int], encoding: tiktoken.Encoding | None = None) -> list[int]:
    """``[message_tokens(role, text[:c]) for c in cuts]`` with ``text`` tokenised once (through the per-message
    memo of :func:`promptcache.tokens.chatml.encode_message`) and only a few characters per cut again.

    ``cuts`` are character offsets into ``text`` (0 to ``len(text)``). Counts include the ChatML framing.
    """
    enc = encoding or chatml_encoding()
    head = len(role) + 1  # f"{role}\n"
    full = f"{role}\n{text}"
    ids = encode_message(role, text, enc)
    _, offsets = enc.decode_with_offsets(list(ids))
    ends = [m.end() for m in _pieces_pattern(enc._pat_str).finditer(full)]
    counts = []
    for cut in cuts:
        end = head + cut
        if end >= len(full):
            counts.append(len(ids) + FRAMING_TOKENS)
            continue
        # The piece holding the last character of the prefix, and the safe start one piece before it.
        holding = bisect.bisect_right(ends, end - 1)
        safe = ends[holding - 2] if holding >= 2 else 0
        before = bisect.bisect_left(offsets, safe)
        tail = len(enc.encode(full[safe:end], disallowed_special=())) if end > safe else 0
        counts.append(before + tail + FRAMING_TOKENS)
    return counts


__all__ = ["cut_message_tokens"]
