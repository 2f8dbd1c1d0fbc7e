"""CacheStore's liveness rules (caching.md §8.2 step 1): `first_live` is `live` on each key in turn."""

from __future__ import annotations

from readbench.cache.store import CacheStore


def _store() -> CacheStore:
    s = CacheStore()
    s.put(b"expired", 100, now_seconds=0.0, expires_at_seconds=50.0, readable_from_seconds=0.0)
    s.put(b"concurrent", 200, now_seconds=0.0, expires_at_seconds=500.0, readable_from_seconds=90.0)
    s.put(b"live", 300, now_seconds=0.0, expires_at_seconds=500.0, readable_from_seconds=10.0)
    s.put(b"deeper", 400, now_seconds=0.0, expires_at_seconds=500.0, readable_from_seconds=10.0)
    return s


def test_first_live_skips_missing_expired_and_unreadable_entries_and_drops_the_expired():
    keys = (b"deeper", b"live", b"concurrent", b"missing", b"expired")
    s = _store()
    # at 60 s: "expired" ended at 50 s, "concurrent" is readable from 90 s
    assert s.first_live(keys, [4, 3, 2, 1, 0], 60.0) == 1
    assert s.peek(b"expired") is None  # dropped on the way, as `live` drops it
    assert s.peek(b"concurrent") is not None  # not yet readable is not gone
    assert len(s) == 3
    assert s.first_live(keys, [4, 3, 2], 60.0) is None
    assert s.first_live(keys, [2, 0], 95.0) == 2
    assert s.first_live(keys, [], 95.0) is None
    assert s.first_live(keys, [1, 0], 500.0) is None  # expiry is exclusive
    assert len(s) == 1


def test_first_live_agrees_with_live_in_turn():
    keys = (b"deeper", b"live", b"concurrent", b"missing", b"expired")
    for now in (0.0, 5.0, 10.0, 49.9, 50.0, 89.0, 90.0, 499.0, 500.0):
        for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 4, 1], [3]):
            a, b = _store(), _store()
            expected = next((i for i in order if b.live(keys[i], now) is not None), None)
            assert a.first_live(keys, order, now) == expected, (now, order)
            # the same entries dropped: those `live` met before stopping
            assert sorted(a._entries) == sorted(b._entries), (now, order)
