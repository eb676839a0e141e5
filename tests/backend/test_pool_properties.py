"""Property tests (design doc correctness test 4): random add / step / finish / abort / preempt / reset
sequences on the real scheduler and KV cache manager keep the pool invariants.

The model is not needed for block accounting: each step's sampled tokens come
from a seeded RNG instead of logits (everything else is the engine's code path).
"""

from __future__ import annotations

import random
from collections import Counter

from backend_support import make_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_backend.hashing import hash_block_tokens
from local_backend.kv_cache_manager import KVCacheManager
from local_backend.request import RequestStatus
from local_backend.scheduler import Scheduler

BS = 4
PREFIXES = [list(range(1, 13)), list(range(50, 59)), []]

operation = st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(PREFIXES) - 1), st.integers(1, 20), st.integers(1, 16),
              st.sampled_from([None, "s1"])),
    st.tuples(st.just("add"), st.integers(0, len(PREFIXES) - 1), st.integers(1, 20), st.integers(1, 16),
              st.sampled_from([None, "s1"])),
    st.tuples(st.just("step")),
    st.tuples(st.just("step")),
    st.tuples(st.just("step")),
    st.tuples(st.just("abort"), st.integers(0, 50)),
    st.tuples(st.just("reset")),
)


def check_invariants(kv: KVCacheManager, scheduler: Scheduler) -> None:
    pool = kv.pool
    # block counts add up; references equal block-table occurrences
    occurrences = Counter(blk.block_id for table in kv.req_to_blocks.values() for blk in table)
    assert pool.num_used_blocks == len(occurrences)
    assert pool.num_empty_blocks + pool.num_evictable_blocks + pool.num_used_blocks == pool.num_blocks
    for blk in pool.blocks:
        assert blk.ref_cnt == occurrences.get(blk.block_id, 0)
    # nothing referenced is evictable; evictable blocks are cached; empty blocks are not
    for blk in pool.policy.ordered():
        assert blk.ref_cnt == 0 and blk.block_hash is not None
    for blk in pool.empty_blocks():
        assert blk.ref_cnt == 0 and blk.block_hash is None and not blk.in_policy
    # every map entry points at a block whose stored tokens hash to it, and its parent is cached (no orphans)
    for block_hash, blk in pool.hash_to_block.items():
        assert blk.block_hash == block_hash
        assert hash_block_tokens(blk.parent_hash, blk.token_ids, blk.extra_keys) == block_hash
        if blk.depth:
            parent = pool.hash_to_block.get(blk.parent_hash)
            assert parent is not None and parent.depth == blk.depth - 1
    # every running request holds exactly the blocks of its computed tokens, cached under its own hashes
    for request in scheduler.running:
        table = kv.req_to_blocks[request.request_id]
        assert len(table) == -(-request.num_computed_tokens // BS)
        for i in range(request.num_computed_tokens // BS):
            assert table[i].block_hash == request.block_hashes[i]
    for request in scheduler.waiting:
        assert request.request_id not in kv.req_to_blocks and request.num_computed_tokens == 0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=1, max_size=80), eviction=st.sampled_from(["lru", "lfu", "priority"]),
       num_blocks=st.integers(6, 16), budget=st.integers(3, 48), aware=st.booleans(), seed=st.integers(0, 2**16))
def test_pool_invariants_hold_under_random_workloads(ops, eviction, num_blocks, budget, aware, seed):
    rng = random.Random(seed)
    kv = KVCacheManager(num_blocks, BS, eviction)
    # max_model_len within the pool, as the engine guarantees: a lone request always fits
    scheduler = Scheduler(kv, max_num_seqs=6, max_num_batched_tokens=budget, max_model_len=num_blocks * BS,
                          prefix_aware_admission=aware)
    live: list = []
    for n, op in enumerate(ops):
        if op[0] == "add":
            _, prefix, suffix, max_tokens, salt = op
            tokens = (PREFIXES[prefix] + [rng.randrange(100, 120) for _ in range(suffix)])[: num_blocks * BS - 1]
            request = make_request(f"r{n}", tokens, BS, salt=salt, max_tokens=max_tokens,
                                   priority=rng.randrange(3), priority_tokens=len(PREFIXES[prefix]))
            scheduler.add_request(request)
            live.append(request)
        elif op[0] == "step":
            out = scheduler.schedule()
            sampled = {s.request.request_id: rng.randrange(100, 104) for s in out.scheduled if s.samples}
            scheduler.update_from_output(out, sampled)
            kv.pool.clock += 1
        elif op[0] == "abort" and live:
            request = live[op[1] % len(live)]
            if not request.is_finished:
                scheduler.abort(request)
        elif op[0] == "reset":
            in_use = kv.pool.num_used_blocks > 0
            assert kv.reset_prefix_cache() is (not in_use)
            if not in_use:
                assert kv.pool.hash_to_block == {}
        check_invariants(kv, scheduler)
    # drain: everything finishes, and every block comes back
    for _ in range(2000):
        if not scheduler.has_unfinished_requests():
            break
        out = scheduler.schedule()
        assert out.scheduled, "a step with unfinished requests must make progress"
        scheduler.update_from_output(out, {s.request.request_id: 100 for s in out.scheduled if s.samples})
        kv.pool.clock += 1
        check_invariants(kv, scheduler)
    assert not scheduler.has_unfinished_requests()
    assert all(r.status is RequestStatus.FINISHED for r in live)
    assert kv.pool.num_used_blocks == 0


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(1, 40), min_size=1, max_size=12), seed=st.integers(0, 2**16))
def test_sequential_hits_equal_the_block_aligned_common_prefix(lengths, seed):
    """Requests run one at a time with an ample pool hit exactly what a trie of earlier sequences predicts."""
    from local_backend.oracle import PrefixTrieOracle

    rng = random.Random(seed)
    kv = KVCacheManager(256, BS)
    scheduler = Scheduler(kv, max_num_seqs=4, max_num_batched_tokens=64, max_model_len=1024)
    oracle = PrefixTrieOracle(BS)
    history: list[list[int]] = []
    for n, length in enumerate(lengths):
        base = rng.choice(history) if history and rng.random() < 0.7 else []
        tokens = base[: rng.randint(0, len(base))] + [rng.randrange(100, 103) for _ in range(length)]
        request = make_request(f"r{n}", tokens, BS, max_tokens=rng.randint(1, 6))
        expected = oracle.hit_tokens(tokens)
        scheduler.add_request(request)
        while scheduler.has_unfinished_requests():
            out = scheduler.schedule()
            scheduler.update_from_output(out, {s.request.request_id: rng.randrange(100, 103)
                                               for s in out.scheduled if s.samples})
        assert request.num_cached_tokens == expected
        oracle.record(tokens, request.output_token_ids)
        history.append(request.all_token_ids)
