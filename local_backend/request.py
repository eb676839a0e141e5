"""One request inside the engine: its tokens, progress, block hashes and timings."""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence

from local_backend.hashing import BlockHash, extend_block_hashes
from local_backend.sampling_params import SamplingParams


class RequestStatus(enum.Enum):
    """Where a request is in its life (vLLM v1's ``RequestStatus``, finished states merged).

    ``WAITING`` (queued, holds no blocks) -> ``RUNNING`` (admitted: holds
    blocks, computes tokens each step) -> ``FINISHED`` (blocks freed; the
    :class:`FinishReason` says why). A running request the pool cannot grow
    is ``PREEMPTED``: its blocks are freed and it waits again at the front of
    the queue, to be recomputed (its cached full blocks are hit again).
    """

    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED = "finished"


class FinishReason(str, enum.Enum):
    """Why a request ended, in OpenAI's words."""

    STOP = "stop"  # an end-of-sequence or stop token
    LENGTH = "length"  # max_tokens or the model's context
    ABORT = "abort"  # abort_request
    ERROR = "error"  # this request could not be served (``Request.error`` says why); the others carry on


class Request:
    """A prompt being served.

    Args:
        request_id: unique among unfinished requests.
        prompt_token_ids: the prompt (length >= 1).
        sampling_params: how to pick tokens.
        block_size: tokens per KV block.
        root_extra: ``extra_0`` of the block hashes (salt + model fingerprint),
            or None when prefix caching is off (no hashes are computed).
        priority: eviction priority given to this request's cached blocks.
        priority_tokens: how many leading prompt tokens get ``priority`` (None:
            the whole prompt), e.g. the length of a system prompt to pin.
        arrival_time: ``time.perf_counter()`` seconds; TTFT counts from it.

    ``all_token_ids`` is the prompt followed by the output tokens;
    ``num_computed_tokens`` of them have their KV in the pool; ``block_hashes``
    holds the hash of every full block of ``all_token_ids``.
    """

    def __init__(
        self,
        request_id: str,
        prompt_token_ids: Sequence[int],
        sampling_params: SamplingParams,
        block_size: int,
        root_extra: bytes | None,
        *,
        priority: int = 0,
        priority_tokens: int | None = None,
        arrival_time: float | None = None,
        prompt: str | None = None,
    ) -> None:
        self.request_id = request_id
        self.prompt = prompt
        self.prompt_token_ids = list(prompt_token_ids)
        self.sampling_params = sampling_params
        self.block_size = block_size
        self.root_extra = root_extra
        self.priority = priority
        self.priority_tokens = priority_tokens
        self.arrival_time = time.perf_counter() if arrival_time is None else arrival_time
        self.all_token_ids: list[int] = list(self.prompt_token_ids)
        self.output_token_ids: list[int] = []
        self.num_computed_tokens = 0
        self.num_cached_tokens = -1  # prefix hit at first admission; -1 until admitted
        self.num_computed_prompt_tokens = 0  # prompt tokens this request ran through the model
        self.num_preemptions = 0
        self.status = RequestStatus.WAITING
        self.finish_reason: FinishReason | None = None
        self.stop_reason: int | str | None = None
        self.error: str | None = None  # why the request failed (finish reason ERROR)
        self.first_scheduled_time: float | None = None
        self.first_token_time: float | None = None
        self.last_token_time: float | None = None
        self.finished_time: float | None = None
        self.block_hashes: list[BlockHash] = []
        self._update_block_hashes()

    @property
    def num_tokens(self) -> int:
        """Prompt plus output tokens so far."""
        return len(self.all_token_ids)

    @property
    def num_prompt_tokens(self) -> int:
        """Prompt length in tokens."""
        return len(self.prompt_token_ids)

    @property
    def num_output_tokens(self) -> int:
        """Tokens generated so far."""
        return len(self.output_token_ids)

    @property
    def is_finished(self) -> bool:
        """True once the request stopped, hit its length limit, failed or was aborted."""
        return self.status is RequestStatus.FINISHED

    def append_output_token(self, token_id: int) -> None:
        """Append a sampled token (and the hash of a block it completes)."""
        self.output_token_ids.append(token_id)
        self.all_token_ids.append(token_id)
        self._update_block_hashes()

    def _update_block_hashes(self) -> None:
        if self.root_extra is not None:
            extend_block_hashes(self.block_hashes, self.all_token_ids, self.block_size, self.root_extra)

    def block_priority(self, block_index: int) -> int:
        """The eviction priority this request gives its block ``block_index`` (0 outside ``priority_tokens``)."""
        if self.priority_tokens is None or (block_index + 1) * self.block_size <= self.priority_tokens:
            return self.priority
        return 0

    def __repr__(self) -> str:
        return (
            f"Request({self.request_id!r}, tokens={self.num_tokens}, computed={self.num_computed_tokens}, "
            f"status={self.status.value})"
        )
