"""Tokens: the ChatML template shared by the SDK and the engine (``chatml.py``) and the tiktoken encodings per
model, with the offline fallback (``tokenizers.py``)."""

from __future__ import annotations

from promptcache.tokens.chatml import IM_END_ID, IM_START_ID, chatml_encoding, encode_chatml, render_chatml
from promptcache.tokens.tokenizers import count_tokens, encoding_for_model, get_encoding

__all__ = ["IM_END_ID", "IM_START_ID", "chatml_encoding", "count_tokens", "encode_chatml", "encoding_for_model",
           "get_encoding", "render_chatml"]
