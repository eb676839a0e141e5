"""Block-manager unit tests (design doc correctness test 3): ids, hash chain, ref counts, free order,
eviction under pressure, de-duplication, salt isolation, refused reset."""

from __future__ import annotations

import pytest
from backend_support import admit, compute_all, make_request

from local_backend.hashing import hash_block_tokens, root_extra_keys
from local_backend.kv_cache_manager import KVCacheManager

BS = 4


def manager(num_blocks: int = 16, eviction: str = "lru", **kwargs) -> KVCacheManager:
    return KVCacheManager(num_blocks, BS, eviction, **kwargs)


def test_new_blocks_come_from_the_empty_queue_in_order_and_full_blocks_are_chained():
    kv = manager()
    req = make_request("a", list(range(10)))
    assert admit(kv, req) == 0
    assert kv.block_table(req) == [0, 1, 2]
    compute_all(kv, req)
    b0, b1, b2 = kv.req_to_blocks["a"]
    root = root_extra_keys("test-model")
    assert b0.block_hash == hash_block_tokens(None, [0, 1, 2, 3], root)
    assert b1.block_hash == hash_block_tokens(b0.block_hash, [4, 5, 6, 7])
    assert (b1.parent_hash, b1.depth, b1.token_ids) == (b0.block_hash, 1, (4, 5, 6, 7))
    assert b2.block_hash is None  # partial blocks are never hashed
    assert set(kv.pool.hash_to_block) == {b0.block_hash, b1.block_hash}


def test_shared_prefix_hits_take_references_and_release_them():
    kv = manager()
    a = make_request("a", list(range(12)))
    admit(kv, a)
    compute_all(kv, a)
    b = make_request("b", list(range(8)) + [100, 101, 102])
    assert admit(kv, b) == 8
    shared = kv.req_to_blocks["a"][:2]
    assert kv.req_to_blocks["b"][:2] == shared
    assert [blk.ref_cnt for blk in shared] == [2, 2]
    assert kv.req_to_blocks["b"][2] not in kv.req_to_blocks["a"]  # b writes only its own partial block
    kv.free(a)
    assert [blk.ref_cnt for blk in shared] == [1, 1]
    kv.free(b)
    assert [blk.ref_cnt for blk in shared] == [0, 0]
    assert kv.pool.num_used_blocks == 0
    assert kv.prefix_stats.queries == 23 and kv.prefix_stats.hits == 8


@pytest.mark.parametrize(("length", "expected"), [(8, 4), (9, 8), (7, 4), (12, 8), (13, 12)])
def test_lookup_never_serves_the_last_token(length, expected):
    kv = manager()
    first = make_request("first", list(range(length)))
    admit(kv, first)
    compute_all(kv, first)
    kv.free(first)
    again = make_request("again", list(range(length)))
    assert kv.get_computed_blocks(again)[1] == expected


def test_a_finished_request_frees_its_last_block_first():
    kv = manager()
    req = make_request("a", list(range(12)))
    admit(kv, req)
    compute_all(kv, req)
    blocks = list(kv.req_to_blocks["a"])
    kv.free(req)
    assert kv.pool.policy.ordered() == [blocks[2], blocks[1], blocks[0]]


def test_eviction_under_pressure_takes_empty_blocks_first_then_lru_deepest_first():
    kv = manager(num_blocks=6)
    a = make_request("a", list(range(8)))
    b = make_request("b", list(range(50, 58)))
    for req in (a, b):
        admit(kv, req)
        compute_all(kv, req)
    a_blocks, b_blocks = list(kv.req_to_blocks["a"]), list(kv.req_to_blocks["b"])
    kv.free(a)
    kv.free(b)
    assert kv.pool.num_empty_blocks == 2 and kv.pool.num_evictable_blocks == 4
    c = make_request("c", list(range(100, 112)))  # 3 blocks: 2 empty + 1 evicted
    admit(kv, c)
    assert kv.pool.num_evictions == 1
    assert a_blocks[1].block_hash is None and a_blocks[1] in kv.req_to_blocks["c"]
    assert a_blocks[0].block_hash is not None  # the ancestor outlives its descendant
    d = make_request("d", list(range(200, 208)))  # 2 more blocks: a's root, then b's deepest
    admit(kv, d)
    assert kv.pool.num_evictions == 3
    assert all(blk.block_hash is None for blk in a_blocks)
    assert b_blocks[1].block_hash is None and b_blocks[0].block_hash is not None


def test_a_block_completed_twice_is_deduplicated():
    kv = manager()
    a = make_request("a", list(range(9)))
    b = make_request("b", list(range(9)))
    admit(kv, a)
    admit(kv, b)  # admitted before a computed anything: no hit yet
    assert kv.block_table(a) != kv.block_table(b)
    compute_all(kv, a)
    compute_all(kv, b)
    assert kv.req_to_blocks["b"][:2] == kv.req_to_blocks["a"][:2]
    assert [blk.ref_cnt for blk in kv.req_to_blocks["a"][:2]] == [2, 2]
    assert len(kv.pool.hash_to_block) == 2
    assert kv.pool.num_used_blocks == 4  # 2 shared + 2 partial; b's two duplicates went back to empty


def test_cache_salt_isolates_requests():
    kv = manager()
    a = make_request("a", list(range(12)), salt="tenant-1")
    admit(kv, a)
    compute_all(kv, a)
    assert kv.get_computed_blocks(make_request("b", list(range(12)), salt="tenant-2"))[1] == 0
    assert kv.get_computed_blocks(make_request("c", list(range(12))))[1] == 0
    assert kv.get_computed_blocks(make_request("d", list(range(12)), salt="tenant-1"))[1] == 8


def test_model_fingerprint_isolates_models():
    kv = manager()
    a = make_request("a", list(range(12)), fingerprint="model-A")
    admit(kv, a)
    compute_all(kv, a)
    assert kv.get_computed_blocks(make_request("b", list(range(12)), fingerprint="model-B"))[1] == 0
    assert kv.get_computed_blocks(make_request("c", list(range(12)), fingerprint="model-A"))[1] == 8


def test_reset_is_refused_while_blocks_are_in_use():
    kv = manager()
    a = make_request("a", list(range(12)))
    admit(kv, a)
    compute_all(kv, a)
    assert kv.reset_prefix_cache() is False
    assert len(kv.pool.hash_to_block) == 3 and kv.prefix_stats.resets == 0
    kv.free(a)
    assert kv.reset_prefix_cache() is True
    assert kv.pool.hash_to_block == {} and kv.pool.num_empty_blocks == 16
    assert kv.prefix_stats.resets == 1
    assert kv.get_computed_blocks(make_request("b", list(range(12))))[1] == 0


def test_allocation_refused_when_the_pool_is_short_changes_nothing():
    kv = manager(num_blocks=3)
    a = make_request("a", list(range(8)))
    admit(kv, a)
    b = make_request("b", list(range(50, 58)))
    assert kv.allocate_slots(b, 8) is False
    assert "b" not in kv.req_to_blocks and kv.pool.num_free_blocks == 1


def test_hit_blocks_that_were_evictable_are_not_counted_as_free_twice():
    kv = manager(num_blocks=4)
    a = make_request("a", list(range(12)))
    admit(kv, a)
    compute_all(kv, a)
    kv.free(a)  # 3 cached-evictable + 1 empty
    b = make_request("b", list(range(8)) + list(range(70, 82)))  # hits 2 blocks, needs 3 more: only 2 others
    hits, num_hit = kv.get_computed_blocks(b)
    assert num_hit == 8
    assert kv.allocate_slots(b, b.num_tokens - num_hit, hits) is False
    assert all(blk.ref_cnt == 0 for blk in hits) and kv.pool.num_evictable_blocks == 3


def test_verify_hits_rejects_a_colliding_block_on_lookup_and_on_deduplication():
    kv = manager(verify_hits=True)
    a = make_request("a", list(range(12)))
    admit(kv, a)
    compute_all(kv, a)
    forged = kv.req_to_blocks["a"][1]
    forged.token_ids = (9, 9, 9, 9)  # as if another sequence collided on this hash
    b = make_request("b", list(range(12)))
    assert admit(kv, b) == 4  # the lookup stops at the forged block
    own = kv.req_to_blocks["b"][1:]
    compute_all(kv, b)
    assert kv.req_to_blocks["b"][1:] == own  # b keeps the K/V it computed, not the forged block's
    assert [blk.block_hash for blk in own] == [None, None]  # and registers nothing past the collision
    assert kv.pool.get_cached_block(b.block_hashes[1]) is forged and forged.ref_cnt == 1
    assert len(kv.pool.hash_to_block) == 3
    kv.free(b)
    assert kv.pool.num_empty_blocks == 16 - 3  # b's own blocks went back empty, the cached ones stayed

    unverified = manager()  # without verify_hits the hash is trusted: the same tokens de-duplicate
    c, d = make_request("c", list(range(12))), make_request("d", list(range(12)))
    admit(unverified, c)
    admit(unverified, d)
    compute_all(unverified, c)
    compute_all(unverified, d)
    assert unverified.req_to_blocks["d"] == unverified.req_to_blocks["c"]


def test_usage_counts_fragmentation_and_sharing():
    kv = manager()
    a = make_request("a", list(range(10)))
    admit(kv, a)
    compute_all(kv, a)
    b = make_request("b", list(range(8)) + [90])
    admit(kv, b)
    compute_all(kv, b)
    usage = kv.usage()
    assert usage.blocks_used == 4 and usage.slots_allocated == 16
    assert usage.tokens_stored == 8 + 2 + 1  # 2 shared full blocks + a's 2-token tail + b's 1-token tail
    assert usage.tokens_referenced == 19
    assert usage.internal_fragmentation == pytest.approx(1 - 11 / 16)
    assert usage.sharing_factor == pytest.approx(19 / 11)
