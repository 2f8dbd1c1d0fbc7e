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


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A PEP 691 index on 127.0.0.1 listing two files of project ``Demo_Pkg`` (one with a wrong
    digest); ``PIP_INDEX_URL`` points at it and pip, if called, records its arguments."""
    import http.server
    import json
    import threading

    from readbench.corpus import _fetch

    good, other = b"sdist bytes", b"wheel bytes"
    files = {"/files/demo_pkg-1.0.tar.gz": good, "/files/demo_pkg-1.0-py3-none-any.whl": other}
    listing = {"meta": {"api-version": "1.1"}, "files": [
        {"filename": "demo_pkg-1.0.tar.gz", "url": "../../files/demo_pkg-1.0.tar.gz",
         "hashes": {"sha256": hashlib.sha256(good).hexdigest()}},
        {"filename": "demo_pkg-1.0-py3-none-any.whl", "url": "/files/demo_pkg-1.0-py3-none-any.whl",
         "hashes": {"sha256": "0" * 64}}]}
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            if self.path == "/simple/demo-pkg/":
                body = json.dumps(listing).encode()
            elif self.path in files:
                body = files[self.path]
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple/")
    pip_calls: list[list[str]] = []
    monkeypatch.setattr(_fetch, "_pip_download", lambda args, dest: pip_calls.append(args))
    yield {"good": good, "asked": asked, "pip": pip_calls}
    server.shutdown()


def test_index_listing_serves_the_pinned_file_without_pip(tmp_path, index):
    sha = hashlib.sha256(index["good"]).hexdigest()
    got = fetch_file("demo_pkg-1.0.tar.gz", sha, ["demo-pkg==1.0"], downloads=tmp_path / "dl",
                     project="Demo_Pkg")
    assert got.read_bytes() == b"sdist bytes"
    assert index["asked"] == ["/simple/demo-pkg/", "/files/demo_pkg-1.0.tar.gz"]
    assert index["pip"] == []


def test_listing_with_another_digest_or_no_such_file_falls_back_to_pip(tmp_path, index):
    for name in ("demo_pkg-1.0-py3-none-any.whl", "demo_pkg-2.0.tar.gz"):
        with pytest.raises(RuntimeError, match=rf"pip saved \[\], expected '{name}'"):
            fetch_file(name, "1" * 64, [f"{name}-args"], downloads=tmp_path / "dl", project="demo-pkg")
    assert index["pip"] == [["demo_pkg-1.0-py3-none-any.whl-args"], ["demo_pkg-2.0.tar.gz-args"]]
    assert index["asked"] == ["/simple/demo-pkg/", "/simple/demo-pkg/"]  # no file fetched
    assert not (tmp_path / "dl").exists()
