"""``LocalEngine``: a paged-KV, prefix-caching inference engine over a transformers model.

Two APIs, both vLLM-shaped:

* offline: ``engine.generate(prompts, SamplingParams(...)) -> list[RequestOutput]``;
* request level (for the server): ``add_request``, ``abort_request``,
  ``finish_request`` (a stop string matched outside the engine),
  ``step() -> list[StepOutput]``, ``has_unfinished_requests``.

Threading: the engine is not thread-safe. Exactly one thread drives it (calls
``add_request`` / ``abort_request`` / ``step`` / ``generate`` /
``reset_prefix_cache``); a server runs one engine-loop thread and hands
results to its event loop. Bad input raises an
:class:`~local_backend.errors.InvalidRequestError` (a ``ValueError``) from
``add_request`` / ``generate`` before anything is queued, so the engine keeps
serving the other requests.

Failures while running: a request that cannot be sampled (NaN logits, say)
finishes with ``finish_reason="error"`` and its ``error`` message, alone; an
exception from the model's forward pass propagates out of ``step`` with the
engine's state intact (the step can be retried, or the requests aborted), and
``generate`` aborts its own requests before re-raising it.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence
from typing import Any

import torch

from local_backend.config import EngineConfig
from local_backend.errors import (
    DuplicateRequestError,
    EmptyPromptError,
    InvalidRequestError,
    OutOfVocabularyError,
    PromptTooLongError,
)
from local_backend.hashing import HASH_NAME, root_extra_keys
from local_backend.kv_cache_manager import KVCacheManager
from local_backend.kv_store import KVStore
from local_backend.metrics import KVUsage
from local_backend.model_runner import ModelRunner, Segment
from local_backend.models import load_model
from local_backend.outputs import CompletionOutput, RequestMetrics, RequestOutput, StepOutput
from local_backend.request import FinishReason, Request
from local_backend.sampler import Sampler
from local_backend.sampling_params import SamplingParams
from local_backend.scheduler import Scheduler

PromptInput = str | Sequence[int]
"""What the engine takes as a prompt: text (tokenised by the engine's tokenizer) or token ids."""


class LocalEngine:
    """A real inference engine with a paged KV cache and automatic prefix caching.

    Args:
        model: None for the embedded default model (random weights: text is
            meaningless, counts, cache behaviour and timings are real); a local
            transformers model directory; or a ``PreTrainedModel`` object. An
            object is taken over, not copied: it runs where it is, in its own
            dtype, unless ``device`` / ``dtype`` are given, and then it is moved
            in place (``model.to``); it is also put in eval mode (see
            :func:`~local_backend.models.load_model`).
        block_size: tokens per KV block.
        num_blocks / kv_cache_mb: pool size (one of them; default 1 GiB).
        eviction: ``"lru"``, ``"lfu"`` or ``"priority"``.
        tokenizer: override the model's tokenizer (required for text prompts
            when ``model`` is an object).
        **options: the other :class:`~local_backend.config.EngineConfig` fields
            (``enable_prefix_caching``, ``max_num_seqs``,
            ``max_num_batched_tokens``, ``max_model_len``, ``scheduling``,
            ``prefix_aware_admission``, ``verify_hits``, ``device``, ``dtype``,
            ``num_threads``, ``seed``). ``device`` / ``dtype`` default to CUDA
            (bf16), then MPS (fp16), then CPU (fp32) for the embedded model and
            directories, and to a model object's own.

    Raises:
        ValueError: a bad option, or ``max_model_len`` above the model's context.
        ModelNotFoundError: ``model`` names a missing directory (also a ``FileNotFoundError``).
        ModelLoadError: ``model`` names a folder that is not a transformers model, or one that
            ``from_pretrained`` cannot load (a ``ValueError``; the message says what to pass instead).
    """

    def __init__(
        self,
        model: Any = None,
        block_size: int = 16,
        num_blocks: int | None = None,
        kv_cache_mb: float | None = None,
        eviction: str = "lru",
        *,
        tokenizer: Any = None,
        **options: Any,
    ) -> None:
        self.config = EngineConfig(
            block_size=block_size, num_blocks=num_blocks, kv_cache_mb=kv_cache_mb, eviction=eviction, **options
        )
        cfg = self.config
        if cfg.num_threads:
            torch.set_num_threads(cfg.num_threads)
        self.loaded = load_model(model, tokenizer, cfg.device, cfg.dtype)
        lm = self.loaded
        self.bytes_per_block = KVStore.bytes_per_block(lm.num_layers, block_size, lm.num_kv_heads, lm.head_dim,
                                                       lm.dtype)
        self.num_blocks = cfg.resolve_num_blocks(self.bytes_per_block)
        if cfg.max_model_len is not None and cfg.max_model_len > lm.max_context:
            raise ValueError(
                f"max_model_len={cfg.max_model_len} exceeds the model's context of {lm.max_context} tokens"
            )
        self.max_model_len = min(cfg.max_model_len or lm.max_context, self.num_blocks * block_size)
        self.kv = KVCacheManager(self.num_blocks, block_size, cfg.eviction, cfg.enable_prefix_caching,
                                 cfg.verify_hits)
        self.store = KVStore(lm.num_layers, self.num_blocks, block_size, lm.num_kv_heads, lm.head_dim, lm.dtype,
                             lm.device)
        self.runner = ModelRunner(lm.model, self.store, block_size)
        eos = lm.tokenizer.eos_token_ids if lm.tokenizer is not None else _config_eos(lm.model.config)
        self.scheduler = Scheduler(
            self.kv, cfg.max_num_seqs, cfg.max_num_batched_tokens, self.max_model_len, eos,
            cfg.scheduling, cfg.prefix_aware_admission,
        )
        self.sampler = Sampler(cfg.seed)
        self._requests: dict[str, Request] = {}
        self._root_extra: dict[str | None, bytes] = {}
        self._ids = itertools.count()
        self.counters = {"finished": 0, "aborted": 0, "failed": 0, "prompt_tokens": 0, "cached_tokens": 0,
                         "computed_prompt_tokens": 0, "generated_tokens": 0, "steps": 0}

    # --- identity -----------------------------------------------------------------
    @property
    def tokenizer(self):
        """The :class:`~local_backend.tokenizer.EngineTokenizer` (None for a model object given without one)."""
        return self.loaded.tokenizer

    @property
    def model_name(self) -> str:
        """The model's name: ``"promptcache-embedded"``, the directory given, or the object's ``name_or_path``."""
        return self.loaded.name

    @property
    def block_size(self) -> int:
        """Tokens per KV block (prefix hits come in multiples of it)."""
        return self.config.block_size

    # --- request API ----------------------------------------------------------------
    def add_request(
        self,
        request_id: str,
        prompt: PromptInput,
        sampling_params: SamplingParams | None = None,
        *,
        cache_salt: str | None = None,
        priority: int = 0,
        priority_tokens: int | None = None,
        arrival_time: float | None = None,
    ) -> None:
        """Queue a request.

        Args:
            request_id: unique among unfinished requests.
            prompt: token ids, or text (encoded with :attr:`tokenizer`).
            sampling_params: default ``SamplingParams()``.
            cache_salt: requests with different salts never share KV blocks.
            priority / priority_tokens: eviction priority of the request's
                cached blocks (used by ``eviction="priority"``), applied to the
                first ``priority_tokens`` prompt tokens (None: all).
            arrival_time: ``time.perf_counter()`` seconds (default: now); TTFT counts from it.

        Raises:
            InvalidRequestError (ValueError): empty prompt, out-of-vocabulary
                ids, prompt longer than the context or the KV pool, a bad
                sampling parameter or a duplicate id. Nothing is queued then.
        """
        if request_id in self._requests:
            raise DuplicateRequestError(f"request id {request_id!r} is already in use")
        self._enqueue(self._make_request(request_id, prompt, sampling_params, cache_salt, priority, priority_tokens,
                                         arrival_time))

    def abort_request(self, request_id: str) -> bool:
        """Stop an unfinished request and free its blocks. Returns False if it is unknown or done."""
        request = self._requests.pop(request_id, None)
        if request is None:
            return False
        self.scheduler.abort(request)
        self.sampler.release(request_id)
        self.counters["aborted"] += 1
        return True

    def finish_request(self, request_id: str, stop_reason: int | str | None = None) -> bool:
        """Finish an unfinished request now with ``finish_reason="stop"``, counted as finished (not aborted).

        For stop conditions checked outside the engine: the server's detokenizer
        matching a stop string, as vLLM's output processor finishes a request on
        a stop string. Its blocks are freed (full blocks stay cached for later
        hits) and its prompt, cached and generated tokens so far are counted in
        :meth:`stats` like those of any finished request, so the counters match
        the usage a server reports for it.

        Args:
            request_id: the request to finish.
            stop_reason: what stopped it (the stop string), kept as its ``stop_reason``.

        Returns:
            True when it was finished; False if it is unknown or already done.
        """
        request = self._requests.get(request_id)
        if request is None:
            return False
        self.scheduler.finish_early(request, FinishReason.STOP)
        request.stop_reason = stop_reason
        self._retire(request)
        return True

    def has_unfinished_requests(self) -> bool:
        """True while any request is waiting or running: keep calling :meth:`step` until it is False."""
        return self.scheduler.has_unfinished_requests()

    def step(self) -> list[StepOutput]:
        """Schedule, run one batched forward step, sample; return what each request got.

        Returns:
            One :class:`StepOutput` per request that got a token this step, or
            failed (``finish_reason="error"``, no token); requests still in
            chunked prefill get none.

        Raises:
            Exception: whatever the model's forward pass raised (a device
                failure, say). Nothing was sampled or advanced: the requests
                stay queued and a later ``step`` retries them, or abort them.
        """
        out = self.scheduler.schedule()
        if not out.scheduled:
            return []
        segments = [Segment(s.token_ids, s.start, self.kv.block_table(s.request)) for s in out.scheduled]
        logits = self.runner.execute(segments)
        rows = [i for i, s in enumerate(out.scheduled) if s.samples]
        sampled = self.sampler.sample(logits[rows], [out.scheduled[i].request for i in rows])
        updated = self.scheduler.update_from_output(out, sampled.token_ids, sampled.errors)
        self.kv.pool.clock += 1
        self.counters["steps"] += 1
        results = []
        for request in updated:
            if request.is_finished:
                self._retire(request)
            results.append(StepOutput(
                request_id=request.request_id,
                new_token_ids=[] if request.error is not None else [request.output_token_ids[-1]],
                finished=request.is_finished,
                finish_reason=request.finish_reason.value if request.finish_reason else None,
                stop_reason=request.stop_reason,
                num_cached_tokens=max(request.num_cached_tokens, 0),
                prompt_tokens=request.num_prompt_tokens,
                ttft=None if request.first_token_time is None else request.first_token_time - request.arrival_time,
                error=request.error,
            ))
        return results

    # --- offline API ---------------------------------------------------------------
    def generate(
        self,
        prompts: PromptInput | Sequence[PromptInput],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        *,
        cache_salt: str | None = None,
        priority: int = 0,
        priority_tokens: int | None = None,
    ) -> list[RequestOutput]:
        """Run prompts to completion, batched, and return their outputs in order.

        Args:
            prompts: one prompt or a list; a prompt is text or a list of token ids.
            sampling_params: one for all, or one per prompt.
            cache_salt, priority, priority_tokens: as :meth:`add_request`.

        Returns:
            One :class:`RequestOutput` per prompt, in order. A request that
            failed alone (its logits could not be sampled) has
            ``outputs[0].finish_reason == "error"`` and ``error`` set; the
            others are unaffected.

        Raises:
            InvalidRequestError (ValueError): any bad prompt or parameter; all
                prompts are checked before any is queued.
            Exception: whatever a model forward pass raised; this call's
                requests are aborted first (blocks freed), so the engine serves
                the next call as if this one had not happened.
        """
        batch = _as_prompt_list(prompts)
        if sampling_params is None or isinstance(sampling_params, SamplingParams):
            params = [sampling_params] * len(batch)
        else:
            params = list(sampling_params)
            if len(params) != len(batch):
                raise InvalidRequestError(f"got {len(params)} sampling params for {len(batch)} prompts")
        requests = [
            self._make_request(f"generate-{next(self._ids)}", p, sp, cache_salt, priority, priority_tokens, None)
            for p, sp in zip(batch, params)
        ]
        try:
            for request in requests:
                self._enqueue(request)
            while any(not r.is_finished for r in requests):
                if not self.step() and not self.scheduler.running:  # pragma: no cover - a scheduler bug, not input
                    raise RuntimeError("the scheduler made no progress with requests waiting")
        except BaseException:  # a failed forward pass, or KeyboardInterrupt: leave nothing of this call behind
            for request in requests:
                if not request.is_finished:
                    self.abort_request(request.request_id)
            raise
        return [self._request_output(r) for r in requests]

    # --- cache control and stats -----------------------------------------------------
    def reset_prefix_cache(self) -> bool:
        """Forget every cached block. Refused (returns False) while requests hold blocks."""
        return self.kv.reset_prefix_cache()

    def kv_usage(self) -> KVUsage:
        """The block pool now: blocks used / cached / empty, fragmentation, sharing."""
        return self.kv.usage()

    def stats(self) -> dict[str, Any]:
        """Everything the metrics endpoint shows, as plain numbers (tokens, blocks, bytes, ratios)."""
        cfg, lm = self.config, self.loaded
        kv = self.kv.usage().as_dict()
        kv.update(bytes_per_block=self.bytes_per_block, pool_bytes=self.store.nbytes)
        return {
            "model": {"name": lm.name, "fingerprint": lm.fingerprint, "embedded": lm.is_embedded,
                      "device": str(lm.device), "dtype": str(lm.dtype).removeprefix("torch."),
                      "max_model_len": self.max_model_len, "vocab_size": lm.vocab_size},
            "config": {"block_size": cfg.block_size, "num_blocks": self.num_blocks, "eviction": cfg.eviction,
                       "enable_prefix_caching": cfg.enable_prefix_caching, "max_num_seqs": cfg.max_num_seqs,
                       "max_num_batched_tokens": cfg.max_num_batched_tokens, "scheduling": cfg.scheduling,
                       "prefix_aware_admission": cfg.prefix_aware_admission, "hash": HASH_NAME},
            "prefix_cache": self.kv.prefix_stats.as_dict(),
            "kv": kv,
            "requests": {"waiting": len(self.scheduler.waiting), "running": len(self.scheduler.running),
                         "finished": self.counters["finished"], "aborted": self.counters["aborted"],
                         "failed": self.counters["failed"], "preemptions": self.scheduler.num_preemptions},
            "tokens": {k: self.counters[k] for k in ("prompt_tokens", "cached_tokens", "computed_prompt_tokens",
                                                      "generated_tokens")},
            "steps": self.counters["steps"],
            "forward_passes": self.runner.forward_passes,
        }

    # --- internals -------------------------------------------------------------------
    def _make_request(self, request_id, prompt, sampling_params, cache_salt, priority, priority_tokens,
                      arrival_time) -> Request:
        if sampling_params is None:
            sampling_params = SamplingParams()
        elif not isinstance(sampling_params, SamplingParams):
            raise InvalidRequestError(f"sampling_params must be a SamplingParams, not {type(sampling_params).__name__}")
        if cache_salt is not None and not isinstance(cache_salt, str):
            raise InvalidRequestError(f"cache_salt must be a string or None, not {type(cache_salt).__name__}")
        text = None
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise InvalidRequestError("this engine has no tokenizer: send token ids, or pass tokenizer=")
            text, prompt = prompt, self.tokenizer.encode(prompt)
        ids = _check_token_ids(prompt, self.loaded.vocab_size)
        if len(ids) > self.max_model_len:
            limit = ("the KV pool" if self.max_model_len < self.loaded.max_context else "the model's context")
            raise PromptTooLongError(
                f"prompt of {len(ids)} tokens is longer than {limit} ({self.max_model_len} tokens); "
                f"shorten it{' or give the engine more kv_cache_mb / num_blocks' if limit == 'the KV pool' else ''}"
            )
        for name, value in (("priority", priority), ("priority_tokens", priority_tokens)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidRequestError(f"{name} must be an integer, got {value!r}")
        root = None
        if self.config.enable_prefix_caching:
            root = self._root_extra.get(cache_salt)
            if root is None:
                root = self._root_extra[cache_salt] = root_extra_keys(self.loaded.fingerprint, cache_salt)
        return Request(request_id, ids, sampling_params, self.block_size, root, priority=priority,
                       priority_tokens=priority_tokens, arrival_time=arrival_time, prompt=text)

    def _enqueue(self, request: Request) -> None:
        self._requests[request.request_id] = request
        self.scheduler.add_request(request)

    def _retire(self, request: Request) -> None:
        self._requests.pop(request.request_id, None)
        self.sampler.release(request.request_id)
        c = self.counters
        c["finished"] += 1
        if request.error is not None:
            c["failed"] += 1
        c["prompt_tokens"] += request.num_prompt_tokens
        c["cached_tokens"] += max(request.num_cached_tokens, 0)
        c["computed_prompt_tokens"] += request.num_computed_prompt_tokens
        c["generated_tokens"] += request.num_output_tokens

    def _request_output(self, request: Request) -> RequestOutput:
        text = self.tokenizer.decode(request.output_token_ids) if self.tokenizer is not None else ""
        completion = CompletionOutput(0, text, list(request.output_token_ids),
                                      request.finish_reason.value if request.finish_reason else None,
                                      request.stop_reason)
        return RequestOutput(request.request_id, request.prompt, list(request.prompt_token_ids),
                             max(request.num_cached_tokens, 0), [completion], request.is_finished,
                             RequestMetrics.of(request), request.error)


def _config_eos(config: Any) -> tuple[int, ...]:
    eos = getattr(config, "eos_token_id", None)
    if eos is None:
        return ()
    return tuple(eos) if isinstance(eos, (list, tuple)) else (eos,)


def _as_prompt_list(prompts: PromptInput | Sequence[PromptInput]) -> list[PromptInput]:
    if isinstance(prompts, str) or getattr(prompts, "ndim", None) == 1:  # text, or one 1-D array of ids
        return [prompts]
    prompts = list(prompts)
    if prompts and all(isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in prompts):
        return [prompts]  # one prompt given as token ids
    return prompts


def _check_token_ids(prompt: Any, vocab_size: int) -> list[int]:
    if hasattr(prompt, "tolist") and getattr(prompt, "ndim", 1) == 1:  # a 1-D numpy array or torch tensor
        prompt = prompt.tolist()
    if not isinstance(prompt, Sequence) or isinstance(prompt, (bytes, bytearray)):
        raise InvalidRequestError(f"a prompt is text or a list of token ids, not {type(prompt).__name__}")
    ids = list(prompt)
    if not ids:
        raise EmptyPromptError("the prompt is empty: send at least one token")
    for position, token in enumerate(ids):
        if isinstance(token, bool) or not isinstance(token, numbers.Integral):
            raise InvalidRequestError(f"token ids must be integers; position {position} holds {token!r}")
        ids[position] = token = int(token)  # numpy integers included
        if not 0 <= token < vocab_size:
            raise OutOfVocabularyError(
                f"token id {token} at position {position} is outside the model's vocabulary [0, {vocab_size})"
            )
    return ids
