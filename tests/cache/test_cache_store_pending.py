"""`CacheStore.put_prompt` leaves the refresh of a prompt's hit prefix pending (readbench.cache.store):
every answer of the store must be what `put_prefixes`, which refreshes every key at once, gives.

Random agent-loop-like request sequences (prompts that grow, branch off at an earlier block, are
rebuilt as new but equal hash objects, start with fewer boundaries below the minimum, come after
gaps longer than the TTL) are run through two stores with the automatic-prefix policy's steps
(`first_live` longest first, then cache the whole prompt), with `peek`, `put`, `refresh` and
`live` in between; the hit, and every entry's fields, must agree after every step.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from readbench.cache.store import CacheStore


def _chain(contents: list[bytes]) -> tuple[bytes, ...]:
    out, h = [], b""
    for c in contents:
        h = hashlib.blake2b(h + c, digest_size=16).digest()
        out.append(h)
    return tuple(out)


def _state(store: CacheStore) -> dict[bytes, tuple[int, float, float]]:
    """Every entry's fields with the pending refresh applied on a copy (the store keeps it pending)."""
    out = {k: (e.tokens, e.expires_at_seconds, e.readable_from_seconds) for k, e in store._entries.items()}
    for k in store._pend_keys[store._pend_lo:store._pend_hi]:
        if k in out and store._pend_expires > out[k][1]:
            out[k] = (out[k][0], store._pend_expires, out[k][2])
    return out


@pytest.mark.parametrize("seed", range(40))
def test_put_prompt_answers_as_put_prefixes(seed):
    rng = random.Random(seed)
    ttl = rng.choice([30.0, 300.0])
    lazy, eager = CacheStore(), CacheStore()
    contents: list[bytes] = [b"sys"]
    hashes = _chain(contents)
    now = 0.0
    for step in range(150):
        r = rng.random()
        if r < 0.55:  # the loop appends blocks: the same hash objects over the old prefix
            new = [rng.randbytes(2) for _ in range(rng.randint(1, 4))]
            contents += new
            hashes = hashes + _chain(contents)[len(hashes):]
        elif r < 0.75 and len(contents) > 2:  # a pruner changes an earlier block
            at = rng.randrange(1, len(contents))
            contents = contents[:at] + [rng.randbytes(2)] + contents[at + 1:]
            hashes = hashes[:at] + _chain(contents)[at:]
        elif r < 0.85:  # the same prompt rebuilt: equal keys in new objects
            hashes = tuple(bytes(bytearray(h)) for h in hashes)
        elif r < 0.92 and len(contents) > 3:  # back to a shorter earlier prompt
            contents = contents[: rng.randrange(2, len(contents))]
            hashes = _chain(contents)
        now += rng.choice([1.0, 5.0, ttl / 2, ttl, ttl * 1.5]) * rng.random()
        cum = tuple(range(10, 10 * len(hashes) + 1, 10))
        lo = min(rng.choice([0, 0, 0, 1, 2]), len(hashes))
        first_token = now + rng.choice([0.0, 0.5, 3.0])
        order = range(len(hashes) - 1, lo - 1, -1)
        hit_lazy, hit_eager = lazy.first_live(hashes, order, now), eager.first_live(hashes, order, now)
        assert hit_lazy == hit_eager, step
        best = -1 if hit_lazy is None else hit_lazy
        lazy.put_prompt(hashes, cum, lo=lo, first=best + 1, now_seconds=now, expires_at_seconds=now + ttl,
                        readable_from_seconds=first_token)
        eager.put_prefixes(hashes[lo:], cum[lo:], first=max(best + 1 - lo, 0), now_seconds=now,
                           expires_at_seconds=now + ttl, readable_from_seconds=first_token)
        other = rng.random()
        key = rng.choice(hashes)
        if other < 0.1:
            assert lazy.peek(key) == eager.peek(key)
        elif other < 0.15:
            assert lazy.live(key, now + ttl / 3) == eager.live(key, now + ttl / 3)
        elif other < 0.2:
            lazy.refresh(key, now + 2 * ttl)
            eager.refresh(key, now + 2 * ttl)
        elif other < 0.25:
            for s in (lazy, eager):
                s.put(key, 7, now_seconds=now, expires_at_seconds=now + ttl / 2, readable_from_seconds=now)
        if step % 10 == 0 or other < 0.25:
            assert _state(lazy) == _state(eager), step
    assert _state(lazy) == _state(eager)
