"""Builders shared by the engine tests that need no model."""

from __future__ import annotations

from local_backend.hashing import root_extra_keys
from local_backend.request import Request
from local_backend.sampling_params import SamplingParams

FINGERPRINT = "test-model"


def make_request(request_id: str, tokens: list[int], block_size: int = 4, salt: str | None = None,
                 max_tokens: int = 4, fingerprint: str = FINGERPRINT, **kwargs) -> Request:
    """A request whose block hashes use ``fingerprint`` and ``salt``."""
    return Request(request_id, tokens, SamplingParams(max_tokens=max_tokens, temperature=0.0), block_size,
                   root_extra_keys(fingerprint, salt), **kwargs)


def admit(kv, request: Request) -> int:
    """Admit ``request`` the way the scheduler does (prefix hit, then slots for the rest); return the hit."""
    hits, num_hit = kv.get_computed_blocks(request)
    assert kv.allocate_slots(request, request.num_tokens - num_hit, hits)
    kv.record_admission(request, num_hit)
    request.num_computed_tokens = num_hit
    return num_hit


def compute_all(kv, request: Request) -> None:
    """Pretend the model computed every known token (the KV itself is not needed here)."""
    request.num_computed_tokens = request.num_tokens
    kv.cache_blocks(request)
