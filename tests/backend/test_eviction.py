"""Eviction policies: LRU / LFU / priority order, and descendants always go before their ancestors."""

from __future__ import annotations

import pytest
from backend_support import admit, compute_all, make_request

from local_backend.block_pool import KVCacheBlock
from local_backend.eviction import LFUPolicy, LRUPolicy, PriorityPolicy, make_policy
from local_backend.kv_cache_manager import KVCacheManager


def blocks(n: int) -> list[KVCacheBlock]:
    return [KVCacheBlock(i, block_hash=bytes([i]) * 16) for i in range(n)]


def test_lru_is_an_intrusive_fifo_with_o1_removal_from_the_middle():
    policy, (a, b, c, d) = LRUPolicy(), blocks(4)
    for blk in (a, b, c, d):
        policy.insert(blk)
    policy.remove(b)
    assert policy.ordered() == [a, c, d] and len(policy) == 3 and b not in policy
    assert policy.pop() is a
    policy.insert(b)
    assert [policy.pop() for _ in range(3)] == [c, d, b]
    with pytest.raises(IndexError):
        policy.pop()


@pytest.mark.parametrize("policy_cls", [LRUPolicy, LFUPolicy, PriorityPolicy])
def test_double_insert_and_stray_remove_are_errors(policy_cls):
    policy, (a,) = policy_cls(), blocks(1)
    policy.insert(a)
    with pytest.raises(ValueError):
        policy.insert(a)
    policy.remove(a)
    with pytest.raises(ValueError):
        policy.remove(a)


def test_lfu_orders_by_use_count_then_release_time_then_depth():
    policy, (a, b, c, d) = LFUPolicy(), blocks(4)
    a.hit_count, a.last_access = 3, 1
    b.hit_count, b.last_access = 1, 5
    c.hit_count, c.last_access, c.depth = 1, 2, 0
    d.hit_count, d.last_access, d.depth = 1, 2, 1
    for blk in (a, b, c, d):
        policy.insert(blk)
    assert policy.ordered() == [d, c, b, a]
    assert [policy.pop() for _ in range(4)] == [d, c, b, a]


def test_priority_orders_by_priority_then_release_time():
    policy, (a, b, c) = PriorityPolicy(), blocks(3)
    a.priority, a.last_access = 1, 0
    b.priority, b.last_access = 0, 9
    c.priority, c.last_access = 0, 3
    for blk in (a, b, c):
        policy.insert(blk)
    policy.remove(c)
    policy.insert(c)  # re-inserted with the same key: the stale heap entry is ignored
    assert [policy.pop() for _ in range(3)] == [c, b, a]


def test_make_policy_rejects_unknown_names():
    assert isinstance(make_policy("LFU"), LFUPolicy)
    with pytest.raises(ValueError, match="lru, lfu, priority"):
        make_policy("fifo")


def _hot_prefix_survives(eviction: str) -> bool:
    """A hot 8-token prefix used three times, then a cold 12-token request under a 6-block pool."""
    kv = KVCacheManager(6, 4, eviction)
    hot = list(range(8))
    for i in range(3):
        req = make_request(f"hot{i}", hot + [100 + i], priority=1, priority_tokens=8)
        admit(kv, req)
        compute_all(kv, req)
        kv.free(req)
    cold = make_request("cold", list(range(200, 212)))
    admit(kv, cold)
    compute_all(kv, cold)
    kv.free(cold)
    cold2 = make_request("cold2", list(range(300, 316)))
    admit(kv, cold2)
    return kv.get_computed_blocks(make_request("probe", hot + [999]))[1] == 8


@pytest.mark.parametrize(("eviction", "survives"), [("lru", False), ("lfu", True), ("priority", True)])
def test_lfu_and_priority_keep_a_hot_system_prompt_that_lru_evicts(eviction, survives):
    assert _hot_prefix_survives(eviction) is survives


@pytest.mark.parametrize("eviction", ["lru", "lfu", "priority"])
def test_no_block_is_evicted_before_its_descendants(eviction):
    kv = KVCacheManager(10, 4, eviction)
    shared = list(range(8))
    a = make_request("a", shared + list(range(10, 18)) + [1])
    b = make_request("b", shared + list(range(20, 28)) + [1], priority=2, priority_tokens=8)
    for req in (a, b):
        admit(kv, req)
        compute_all(kv, req)
    kv.free(b)
    kv.free(a)
    order = kv.pool.policy.ordered()
    position = {blk.block_hash: i for i, blk in enumerate(order)}
    for blk in order:
        if blk.parent_hash is not None:
            assert position[blk.parent_hash] > position[blk.block_hash]
    evicted_hashes = []
    while kv.pool.num_evictable_blocks:
        evicted_hashes.append(kv.pool.policy.pop().block_hash)
    assert evicted_hashes == [blk.block_hash for blk in order]
