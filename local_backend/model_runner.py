"""The model runner: turns a scheduled step into padded forward passes over the paged KV store.

Each scheduled request contributes a *segment*: ``num_new_tokens`` token ids
starting at position ``start``, and its block table. Segments are grouped so
padding stays small (all decodes in one batch; prefill chunks of similar
length together, a decode with them when it fits), and each group runs as one forward of the unmodified
transformers model with:

* ``input_ids`` / ``position_ids`` ``[B, Q]``, **left**-padded so every row's
  last real token sits in column ``Q - 1`` and ``logits_to_keep=1`` gives each
  row's next-token logits (the 100k-row output head is only applied there);
* an explicit boolean mask ``[B, 1, Q, K]``: query at position ``p`` of row
  ``r`` sees keys ``0..p`` of row ``r``'s context, never padding;
* a :class:`~local_backend.paged_cache.PagedCache` as the model's cache
  (``cache=`` in transformers >= 5, ``past_key_values=`` before).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from local_backend.kv_store import KVStore
from local_backend.paged_cache import PagedCache

PAD_TOKEN_ID = 0
MAX_PADDING_RATIO = 1.25
"""A prefill group may hold at most this many padded tokens per real token."""


@dataclass(frozen=True)
class Segment:
    """``token_ids`` at positions ``start .. start + len(token_ids) - 1`` of one sequence, with its block table."""

    token_ids: list[int]
    start: int
    block_table: list[int]

    @property
    def end(self) -> int:
        """One past the last position: the sequence's length in tokens after this segment."""
        return self.start + len(self.token_ids)


class ModelRunner:
    """Runs segments through ``model``, reading and writing K/V in ``store``.

    Args:
        model: a transformers causal LM in eval mode, SDPA attention.
        store: the KV store.
        block_size: tokens per block.

    ``cache_keyword`` is the forward keyword the cache goes under: ``cache``
    where ``model.forward`` names it (transformers 5.x; ``past_key_values`` is
    deprecated there, to be removed in 5.40), else ``past_key_values``.
    """

    def __init__(self, model, store: KVStore, block_size: int) -> None:
        self.model = model
        self.store = store
        self.block_size = block_size
        self.device = store.key_cache[0].device
        params = inspect.signature(model.forward).parameters
        self.cache_keyword = "cache" if "cache" in params else "past_key_values"
        self._logits_to_keep = "logits_to_keep" in params
        self.forward_passes = 0

    @torch.inference_mode()
    def execute(self, segments: list[Segment]) -> torch.Tensor:
        """Compute every segment's K/V and the logits after its last token.

        Returns:
            ``[len(segments), vocab]`` float32 logits, in segment order.
        """
        out: list[torch.Tensor | None] = [None] * len(segments)
        for group in group_segments(segments):
            logits = self._forward([segments[i] for i in group])
            for row, index in enumerate(group):
                out[index] = logits[row]
        return torch.stack(out).float()

    def _slots(self, block_table: list[int], start: int, end: int) -> torch.Tensor:
        bs = self.block_size
        pos = torch.arange(start, end)
        return torch.tensor(block_table, dtype=torch.long)[pos // bs] * bs + pos % bs

    def _forward(self, segments: list[Segment]) -> torch.Tensor:
        b = len(segments)
        q = max(len(s.token_ids) for s in segments)
        k = max(s.end for s in segments)
        ids = torch.full((b, q), PAD_TOKEN_ID, dtype=torch.long)
        pos = torch.empty((b, q), dtype=torch.long)
        lengths = torch.empty(b, dtype=torch.long)
        gather = torch.full((b, k), self.store.null_slot, dtype=torch.long)  # padding reads the zero slot
        write_slots, write_rows = [], []
        for r, seg in enumerate(segments):
            n = len(seg.token_ids)
            ids[r, q - n :] = torch.tensor(seg.token_ids, dtype=torch.long)
            pos[r, : q - n] = seg.start
            pos[r, q - n :] = torch.arange(seg.start, seg.end)
            lengths[r] = seg.end
            context = self._slots(seg.block_table, 0, seg.end)
            gather[r, : seg.end] = context
            write_slots.append(context[seg.start :])
            write_rows.append(torch.arange(r * q + q - n, (r + 1) * q))
        all_real = all(len(s.token_ids) == q for s in segments)
        fresh = b == 1 and segments[0].start == 0
        dev = self.device
        cache = PagedCache(
            self.store,
            batch_size=b,
            query_length=q,
            kv_length=k,
            write_slots=torch.cat(write_slots).to(dev),
            write_rows=None if all_real else torch.cat(write_rows).to(dev),
            gather_slots=gather.view(-1).to(dev),
            fresh=fresh,
        )
        key_pos = torch.arange(k)
        mask = (key_pos[None, None, :] <= pos[:, :, None]) & (key_pos[None, None, :] < lengths[:, None, None])
        kwargs = {
            "input_ids": ids.to(dev),
            "position_ids": pos.to(dev),
            "attention_mask": mask.unsqueeze(1).to(dev),
            "use_cache": True,
            self.cache_keyword: cache,
        }
        if self._logits_to_keep:
            kwargs["logits_to_keep"] = 1
        self.forward_passes += 1
        return self.model(**kwargs).logits[:, -1, :]


def group_segments(segments: list[Segment]) -> list[list[int]]:
    """Indices of ``segments`` to batch together, longest first, while padding stays within
    :data:`MAX_PADDING_RATIO` padded tokens per real token.

    Decodes (one token each) always fit together; a decode also joins a
    prefill group when the padding allows (one forward pass instead of two).
    """
    order = sorted(range(len(segments)), key=lambda i: -len(segments[i].token_ids))
    groups: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        n = len(segments[i].token_ids)
        if current:
            width = len(segments[current[0]].token_ids)  # sorted: the first is the widest
            if width * (len(current) + 1) > MAX_PADDING_RATIO * (real + n):
                groups.append(current)
                current, real = [], 0
        current.append(i)
        real += n
    if current:
        groups.append(current)
    return groups
