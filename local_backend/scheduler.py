"""The scheduler: which requests run in the next step, and how many tokens each computes.

One step (vLLM v1's unified scheduler, at nano-vllm's size):

1. **Running requests first**, in admission order: a decoding request computes
   1 token, a request in chunked prefill computes as much of its remaining
   prompt as the token budget allows. When the pool cannot supply a block,
   the most recently admitted running request is **preempted by recompute**:
   its blocks are freed (its full blocks stay cached, so re-admission hits
   them) and it goes back to the front of the waiting queue.
2. **Waiting requests** are admitted while budget, ``max_num_seqs`` and blocks
   allow: FCFS, or longest-prefix-match first (``scheduling="lpm"``). Each
   starts at its prefix hit. With ``prefix_aware_admission`` a request whose
   next uncached block is being computed by a running request waits for it,
   so N requests sent together with a shared prefix compute it once.

The scheduler never touches tensors; the model runner executes its output.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from local_backend.hashing import BlockHash
from local_backend.kv_cache_manager import KVCacheManager
from local_backend.request import FinishReason, Request, RequestStatus


@dataclass(frozen=True)
class ScheduledRequest:
    """``num_new_tokens`` tokens of ``request`` to compute, from position ``start``."""

    request: Request
    start: int
    num_new_tokens: int

    @property
    def samples(self) -> bool:
        """True when this step reaches the end of the known tokens, so a token is sampled."""
        return self.start + self.num_new_tokens == self.request.num_tokens

    @property
    def token_ids(self) -> list[int]:
        """The ``num_new_tokens`` token ids to compute, positions ``start`` onwards."""
        return self.request.all_token_ids[self.start : self.start + self.num_new_tokens]


@dataclass
class SchedulerOutput:
    """One step's plan, from :meth:`Scheduler.schedule`.

    Attributes:
        scheduled: the requests to run this step, in batch order, each with
            its ``start`` position and ``num_new_tokens``; their slots are
            already allocated.
        preempted: running requests preempted (blocks freed, back to waiting)
            to make room this step.
    """

    scheduled: list[ScheduledRequest] = field(default_factory=list)
    preempted: list[Request] = field(default_factory=list)

    @property
    def num_batched_tokens(self) -> int:
        """Tokens computed this step, all requests together (at most ``max_num_batched_tokens``)."""
        return sum(s.num_new_tokens for s in self.scheduled)


class Scheduler:
    """FCFS / LPM scheduling with a token budget over a :class:`KVCacheManager`.

    Args:
        kv: the cache manager.
        max_num_seqs: running requests at most.
        max_num_batched_tokens: tokens computed per step at most.
        max_model_len: a request stops (``"length"``) when it reaches this many tokens.
        eos_token_ids: tokens that end a request unless ``ignore_eos``.
        scheduling: ``"fcfs"`` or ``"lpm"``.
        prefix_aware_admission: see the module docstring.
    """

    def __init__(
        self,
        kv: KVCacheManager,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        eos_token_ids: Iterable[int] = (),
        scheduling: str = "fcfs",
        prefix_aware_admission: bool = True,
    ) -> None:
        self.kv = kv
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_model_len = max_model_len
        self.eos_token_ids = frozenset(eos_token_ids)
        self.scheduling = scheduling
        self.prefix_aware_admission = prefix_aware_admission
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.num_preemptions = 0

    # --- queue ------------------------------------------------------------------
    def add_request(self, request: Request) -> None:
        """Queue ``request`` at the back of the waiting queue (it holds no blocks until admitted).

        The caller validates it first; the scheduler takes any :class:`Request`.
        """
        self.waiting.append(request)

    def has_unfinished_requests(self) -> bool:
        """True while any request is waiting (preempted ones included) or running."""
        return bool(self.waiting or self.running)

    def abort(self, request: Request) -> None:
        """Remove an unfinished request, free its blocks and mark it finished (``"abort"``)."""
        self.finish_early(request, FinishReason.ABORT)

    def finish_early(self, request: Request, reason: FinishReason) -> None:
        """Remove an unfinished request before its own stop condition, free its blocks (its full blocks stay
        cached) and mark it finished with ``reason``: ``ABORT`` (:meth:`abort`), or ``STOP`` for a stop
        condition checked outside the engine (a stop string in the detokenized text)."""
        if request.status is RequestStatus.RUNNING:
            self.running.remove(request)
        elif request in self.waiting:
            self.waiting.remove(request)
        self._finish(request, reason)

    # --- scheduling -------------------------------------------------------------
    def schedule(self) -> SchedulerOutput:
        """Pick this step's requests and allocate their slots."""
        out = SchedulerOutput()
        budget = self.max_num_batched_tokens
        i = 0
        while i < len(self.running) and budget > 0:
            request = self.running[i]
            num_new = min(request.num_tokens - request.num_computed_tokens, budget)
            if not self._allocate_or_preempt(request, num_new, out):
                break  # the request itself was preempted: it was the last running one
            out.scheduled.append(ScheduledRequest(request, request.num_computed_tokens, num_new))
            budget -= num_new
            i += 1
        if not out.preempted:
            self._admit_waiting(out, budget)
        return out

    def _allocate_or_preempt(self, request: Request, num_new: int, out: SchedulerOutput) -> bool:
        """Allocate slots for ``request``, preempting the most recently admitted running requests
        until they fit. Returns False when ``request`` itself had to be preempted."""
        while not self.kv.allocate_slots(request, num_new):
            victim = self.running.pop()
            self._preempt(victim)
            out.preempted.append(victim)
            if victim is request:
                return False
        return True

    def _admit_waiting(self, out: SchedulerOutput, budget: int) -> None:
        bs = self.kv.block_size
        pending: set[BlockHash] = set()
        track = self.prefix_aware_admission and self.kv.enable_caching
        if track:
            for request in self.running:
                if request.num_tokens - request.num_computed_tokens > 1:  # still in prefill
                    pending.update(request.block_hashes[request.num_computed_tokens // bs :])
        held_back: list[Request] = []
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            request = self._pop_waiting()
            hit_blocks, num_hit = self.kv.get_computed_blocks(request)
            next_block = num_hit // bs
            if pending and next_block < len(request.block_hashes) and request.block_hashes[next_block] in pending:
                held_back.append(request)
                continue
            num_new = min(request.num_tokens - num_hit, budget)
            if not self.kv.allocate_slots(request, num_new, hit_blocks):
                self.waiting.appendleft(request)
                break
            self.kv.record_admission(request, num_hit)
            if request.num_cached_tokens < 0:
                request.num_cached_tokens = num_hit
            if request.first_scheduled_time is None:
                request.first_scheduled_time = time.perf_counter()
            request.num_computed_tokens = num_hit
            request.status = RequestStatus.RUNNING
            self.running.append(request)
            out.scheduled.append(ScheduledRequest(request, num_hit, num_new))
            budget -= num_new
            if track:
                pending.update(request.block_hashes[next_block:])
        self.waiting.extendleft(reversed(held_back))

    def _pop_waiting(self) -> Request:
        if self.scheduling == "fcfs" or len(self.waiting) == 1:
            return self.waiting.popleft()
        best, best_hit = 0, -1
        for index, request in enumerate(self.waiting):  # lpm: longest cached prefix first, FCFS on ties
            _, hit = self.kv.get_computed_blocks(request)
            if hit > best_hit:
                best, best_hit = index, hit
        request = self.waiting[best]
        del self.waiting[best]
        return request

    def _preempt(self, request: Request) -> None:
        self.kv.free(request)
        request.status = RequestStatus.PREEMPTED
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(request)

    # --- results ----------------------------------------------------------------
    def update_from_output(
        self, out: SchedulerOutput, sampled: dict[str, int], errors: dict[str, str] | None = None
    ) -> list[Request]:
        """Advance the scheduled requests by the step's results.

        Args:
            out: this step's :meth:`schedule` result, executed.
            sampled: request id -> token sampled this step (for each request with ``samples``).
            errors: request id -> why sampling failed; each such request is
                finished with :attr:`FinishReason.ERROR` (``request.error`` set,
                blocks freed, nothing of this step cached) and the others go on.

        Returns:
            The requests that got a new token or failed (finished ones
            included, already freed).
        """
        now = time.perf_counter()
        errors = errors or {}
        updated: list[Request] = []
        for item in out.scheduled:
            request = item.request
            error = errors.get(request.request_id)
            if error is not None:
                request.error = error
                self.running.remove(request)
                self._finish(request, FinishReason.ERROR)
                updated.append(request)
                continue
            end = item.start + item.num_new_tokens
            request.num_computed_prompt_tokens += max(0, min(end, request.num_prompt_tokens) - item.start)
            request.num_computed_tokens = end
            self.kv.cache_blocks(request)
            if not item.samples:
                continue
            token = sampled[request.request_id]
            request.append_output_token(token)
            if request.first_token_time is None:
                request.first_token_time = now
            request.last_token_time = now
            reason = self._stop_reason(request, token)
            if reason is not None:
                self.running.remove(request)
                self._finish(request, reason)
            updated.append(request)
        return updated

    def _stop_reason(self, request: Request, token: int) -> FinishReason | None:
        params = request.sampling_params
        if (not params.ignore_eos and token in self.eos_token_ids) or token in params.stop_token_ids:
            request.stop_reason = token
            return FinishReason.STOP
        if request.num_output_tokens >= params.max_tokens or request.num_tokens >= self.max_model_len:
            return FinishReason.LENGTH
        return None

    def _finish(self, request: Request, reason: FinishReason) -> None:
        self.kv.free(request)
        request.status = RequestStatus.FINISHED
        request.finish_reason = reason
        request.finished_time = time.perf_counter()
