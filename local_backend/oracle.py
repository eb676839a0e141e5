"""The prefix-cache oracle: the best hit any block-aligned prefix cache could give.

An independent token trie over every sequence whose KV exists (each earlier
request's prompt plus its generated tokens except the last, which is sampled
but never fed back). For a new prompt, the best possible hit is the longest
prefix of it found in the trie, capped at ``len(prompt) - 1`` (the last prompt
token must be computed to get logits) and rounded down to whole blocks.

It shares no code with the block manager on purpose: no hashing, no blocks,
no eviction; so ``engine hit tokens == oracle tokens`` is a real check of the
engine when its pool is large enough and requests run one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence


class PrefixTrieOracle:
    """A token trie per cache salt.

    Args:
        block_size: tokens per block, for :meth:`hit_tokens`' rounding (1 = token granularity).
    """

    def __init__(self, block_size: int) -> None:
        self.block_size = block_size
        self._roots: dict[str | None, dict[int, dict]] = {}
        self.num_nodes = 0

    def insert(self, token_ids: Sequence[int], salt: str | None = None) -> None:
        """Record that the KV of ``token_ids`` (as one sequence from position 0) exists."""
        node = self._roots.setdefault(salt, {})
        for token in token_ids:
            child = node.get(token)
            if child is None:
                child = node[token] = {}
                self.num_nodes += 1
            node = child

    def longest_prefix(self, token_ids: Sequence[int], salt: str | None = None) -> int:
        """Length of the longest prefix of ``token_ids`` that some recorded sequence starts with."""
        node = self._roots.get(salt, {})
        length = 0
        for token in token_ids:
            node = node.get(token)
            if node is None:
                break
            length += 1
        return length

    def hit_tokens(self, prompt: Sequence[int], salt: str | None = None) -> int:
        """The block-aligned best possible prefix hit for ``prompt``, in tokens."""
        usable = min(self.longest_prefix(prompt, salt), len(prompt) - 1)
        return max(usable, 0) // self.block_size * self.block_size

    def record(self, prompt: Sequence[int], output_token_ids: Sequence[int], salt: str | None = None) -> None:
        """Record a finished request: its prompt and every generated token but the last."""
        self.insert([*prompt, *output_token_ids[:-1]], salt)
