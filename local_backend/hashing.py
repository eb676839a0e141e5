"""Block hashes: a chained, 128-bit content hash of every full KV block.

``h_i = H(h_{i-1} || token ids of block i || extra_i)`` with ``h_{-1}`` empty
and ``extra_0`` holding the cache salt and the model fingerprint, so two
requests share block *i* exactly when their first ``(i + 1) * block_size``
tokens, salt and model are equal (vLLM v1's ``hash_block_tokens``; SGLang's
radix tree gives the same sharing). ``H`` is sha256 truncated to 16 bytes, or
xxh3_128 when the ``xxhash`` package is installed; both are collision resistant
for this purpose (vLLM moved from Python ``hash()`` to sha256 after
CVE-2025-25183 showed that weak hashes let one request poison another's cache).

Everything here is a pure function of its arguments: the block pool stores the
hashes, it never computes them.
"""

from __future__ import annotations

import hashlib
import struct
from array import array
from collections.abc import Sequence

try:  # optional speed-up, same interface
    import xxhash

    def _digest(data: bytes) -> bytes:
        return xxhash.xxh3_128_digest(data)

    HASH_NAME = "xxh3_128"
except ImportError:  # pragma: no cover - depends on the environment

    def _digest(data: bytes) -> bytes:
        return hashlib.sha256(data).digest()[:16]

    HASH_NAME = "sha256[:16]"

BlockHash = bytes
"""A 16-byte (128-bit) block hash."""


def root_extra_keys(model_fingerprint: str, cache_salt: str | None = None) -> bytes:
    """``extra_0``: the bytes mixed into the first block's hash.

    Args:
        model_fingerprint: from :func:`local_backend.models.model_fingerprint`;
            caches never cross models.
        cache_salt: an optional per-tenant salt (vLLM's ``cache_salt``); requests
            with different salts never share blocks.
    """
    salt = "" if cache_salt is None else cache_salt
    fp = model_fingerprint.encode()
    salt_b = salt.encode()
    return struct.pack("<II", len(fp), len(salt_b)) + fp + salt_b


def hash_block_tokens(parent_hash: BlockHash | None, token_ids: Sequence[int], extra_keys: bytes = b"") -> BlockHash:
    """Hash one full block.

    Args:
        parent_hash: the previous block's hash, ``None`` for the first block.
        token_ids: exactly ``block_size`` token ids.
        extra_keys: ``extra_i`` (the root extra for block 0, empty afterwards).

    Returns:
        A 16-byte digest.
    """
    parent = parent_hash if parent_hash is not None else b""
    tokens = array("q", token_ids).tobytes()
    return _digest(struct.pack("<III", len(parent), len(tokens), len(extra_keys)) + parent + tokens + extra_keys)


def extend_block_hashes(
    block_hashes: list[BlockHash], token_ids: Sequence[int], block_size: int, root_extra: bytes
) -> list[BlockHash]:
    """Append the hashes of the full blocks of ``token_ids`` not yet in ``block_hashes``.

    ``block_hashes`` holds the hashes of the first ``len(block_hashes)`` full
    blocks of ``token_ids``; it is extended in place (and returned) up to
    ``len(token_ids) // block_size`` entries. This is how hashes grow as output
    tokens are appended, so a later turn of a chat hits the blocks that hold the
    earlier answer.
    """
    num_full = len(token_ids) // block_size
    for i in range(len(block_hashes), num_full):
        parent = block_hashes[i - 1] if i > 0 else None
        extra = root_extra if i == 0 else b""
        block_hashes.append(hash_block_tokens(parent, token_ids[i * block_size : (i + 1) * block_size], extra))
    return block_hashes


def block_hashes_for(token_ids: Sequence[int], block_size: int, root_extra: bytes) -> list[BlockHash]:
    """The hashes of every full block of ``token_ids`` (length ``len(token_ids) // block_size``)."""
    return extend_block_hashes([], token_ids, block_size, root_extra)
