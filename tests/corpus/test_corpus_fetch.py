"""sha256 pinning: corrupted downloads are refused with a message naming file and digests."""

import hashlib

import pytest

from readbench.corpus._fetch import Sha256MismatchError, fetch_file, verify_sha256
from readbench.corpus._sources import load_sources


def test_corrupted_file_error_names_file_and_both_digests(tmp_path):
    path = tmp_path / "pkg-1.0.tar.gz"
    path.write_bytes(b"corrupt")
    good = hashlib.sha256(b"original").hexdigest()
    bad = hashlib.sha256(b"corrupt").hexdigest()
    with pytest.raises(Sha256MismatchError) as err:
        verify_sha256(path, good)
    assert str(err.value) == (
        f"sha256 mismatch for {path}: expected {good}, got {bad}; the file is corrupt or not "
        "the pinned release (delete it to download again)")


def test_cached_corrupt_download_is_refused_without_network(tmp_path):
    (tmp_path / "x-1.0.tar.gz").write_bytes(b"tampered")
    with pytest.raises(Sha256MismatchError, match="x-1.0.tar.gz: expected 0{64}"):
        fetch_file("x-1.0.tar.gz", "0" * 64, ["x==1.0"], downloads=tmp_path)


def test_verified_cached_file_is_returned(tmp_path):
    data = b"ok"
    (tmp_path / "y.whl").write_bytes(data)
    got = fetch_file("y.whl", hashlib.sha256(data).hexdigest(), ["y"], downloads=tmp_path)
    assert got == tmp_path / "y.whl"


def test_committed_recipe_parses_and_pins_every_wheel():
    recipe = load_sources()
    assert [s.name for s in recipe.sources][:3] == ["more-itertools", "click", "docutils"]
    for src in recipe.sources:
        assert len(src.sha256) == 64
        assert src.env["PYTHONPATH"].startswith("{deps}")
        assert all(w in recipe.wheels for w in src.wheels)


def test_bad_recipe_errors_name_the_key(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[[source]]\nname = "a"\nversion = "1"\nsdist = "a.tgz"\nsha256 = "xyz"\n')
    with pytest.raises(ValueError, match="source 'a': sha256 must be 64 lowercase hex chars, got 'xyz'"):
        load_sources(p)
    p.write_text('[[source]]\nname = "a"\nversion = "1"\nsdist = "a.tgz"\nsha256 = "' + "a" * 64
                 + '"\n[[source.target]]\nfile = "m.py"\ntasks = { bugfix = 1 }\n')
    with pytest.raises(ValueError, match="fix families need test_args"):
        load_sources(p)
