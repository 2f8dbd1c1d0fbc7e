"""The prefix chain (readbench.cache.blocks.chain_step, chain_hashes; caching.md §8.1:
h_i = H(h_{i-1}, block_i)): XXH3-128 over the previous hash and the block's content hash, the
replay's inline loop and `salted` using the same step."""

from __future__ import annotations

import xxhash

from readbench.cache.blocks import Block, chain_hashes, chain_step, content_hash
from readbench.replay.prefix import salted


def _blocks(*texts: str) -> tuple[Block, ...]:
    return tuple(Block("text", "user", 10, content_hash(t), True) for t in texts)


def test_chain_step_is_xxh3_128_by_its_published_test_vector():
    # XXH3-128 of the empty input, seed 0 (xxHash's reference vectors): 99aa06d3...8d497f
    assert chain_step(b"") == bytes.fromhex("99aa06d3014798d86001c324468d497f")


def test_chain_hashes_are_each_previous_hash_and_the_block_hashed_in_turn():
    blocks = _blocks("system prompt", "user turn", "tool result")
    h, expected = b"", []
    for b in blocks:  # spelled out with xxhash's streaming object, not the function readbench uses
        x = xxhash.xxh3_128()
        x.update(h)
        x.update(b.content_hash)
        h = x.digest()
        expected.append(h)
    assert chain_hashes(blocks) == tuple(expected)
    assert all(len(h) == 16 for h in expected)


def test_a_change_at_one_block_changes_that_hash_and_every_later_one_only():
    a = _blocks("s", "u1", "a1", "u2", "a2")
    b = (*a[:2], *_blocks("A1 edited"), *a[3:])
    ha, hb = chain_hashes(a), chain_hashes(b)
    assert ha[:2] == hb[:2]
    assert all(x != y for x, y in zip(ha[2:], hb[2:]))
    # equal blocks in other objects chain alike (the hash is of the content, not the object)
    assert chain_hashes(_blocks("s", "u1", "a1", "u2", "a2")) == ha
    # the hashes of a longer request extend those of its prefix
    assert chain_hashes((*a, *_blocks("u3")))[:5] == ha


def test_chain_hashes_reuse_the_previous_hashes_over_the_common_prefix():
    a = _blocks("s", "u1", "a1")
    b = (*a, *_blocks("u2"))
    ha = chain_hashes(a)
    hb = chain_hashes(b, a, ha)
    assert hb == chain_hashes(b)
    assert all(x is y for x, y in zip(ha, hb[:3]))  # the same objects, not hashed again


def test_a_salted_content_hash_is_the_chain_step_of_the_hash_and_the_salt():
    h = content_hash("block")
    assert salted(h, 0) is h
    assert salted(h, 3) == xxhash.xxh3_128_digest(h + (3).to_bytes(4, "big"))
    assert salted(h, 3) != salted(h, 4) != h
