"""`readbench read` and `readbench variants` through click's CliRunner."""

from __future__ import annotations

import json

from click.testing import CliRunner
from read_helpers import BIG

from readbench.read._cli import read_cmd, variants_cmd


def invoke(cmd, args):
    return CliRunner().invoke(cmd, args, catch_exceptions=False)


def test_read_prints_exactly_the_tool_text(tmp_path):
    f = tmp_path / "abc.txt"
    f.write_bytes(b"a\nb\nc\n")
    r = invoke(read_cmd, [str(f), "--variant", "stock", "--offset", "1", "--limit", "3"])
    assert r.exit_code == 0
    assert r.stdout_bytes == b"a\nb\nc\n\n[1 more lines in file. Use offset=4 to continue.]"


def test_read_json_and_tool_errors_exit_zero(tmp_path):
    f = tmp_path / "abc.txt"
    f.write_bytes(b"a\nb\nc\n")
    r = invoke(read_cmd, [str(f), "--offset", "5", "--json"])
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["text"] == "Offset 5 is beyond end of file (4 lines total)"
    assert out["is_error"] is True and out["details"]["error"] == "beyond_eof"
    assert out["details"]["variant"] == "stock" and out["details"]["total_lines"] == 3


def test_read_missing_file_and_directory_use_pis_texts(tmp_path):
    missing = tmp_path / "nope.txt"
    r = invoke(read_cmd, [str(missing)])
    # the model's text on stdout; exit 1, so a script sees that the file could not be read
    assert (r.exit_code, r.stdout) == (1, f"ENOENT: no such file or directory, access '{missing}'")
    r = invoke(read_cmd, [str(tmp_path), "--json"])
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {
        "text": "EISDIR: illegal operation on a directory, read",
        "is_error": True,
        "details": {},
    }


def test_read_strips_a_leading_at_and_keeps_the_raw_path_in_messages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "long.txt").write_bytes(b"x" * 60000 + b"\n")
    r = invoke(read_cmd, ["@long.txt"])
    assert (
        r.stdout
        == "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' @long.txt | head -c 51200]"
    )


def test_read_with_a_json_user_preset(tmp_path):
    f = tmp_path / "big.txt"
    f.write_bytes(BIG)
    spec = json.dumps({"base": "B", "name": "B-1500", "max_lines": 1500})
    r = invoke(read_cmd, [str(f), "--variant", spec])
    assert r.stdout == (
        "File has 2500 lines (23.3KB), over the 1500-line/50.0KB read limit. "
        "Read it in ranges, e.g. offset=1 limit=1000, or grep for what you need first."
    )


def test_bad_arguments_exit_2_and_name_the_input(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes(b"a\n")
    r = CliRunner().invoke(read_cmd, [str(f), "--variant", "Z"])
    assert r.exit_code == 2
    assert "unknown read variant 'Z'; valid: stock, A, B, B-soft" in r.output
    r = CliRunner().invoke(read_cmd, [str(f), "--offset", "x"])
    assert r.exit_code == 2 and "'x' is not a valid integer" in r.output
    r = CliRunner().invoke(read_cmd, [str(f), "--variant", "{bad json"])
    assert r.exit_code == 2 and "not valid JSON" in r.output


def test_variants_lists_every_preset():
    r = invoke(variants_cmd, ["--json"])
    data = json.loads(r.stdout)
    assert [d["name"] for d in data][:10] == [
        "stock",
        "A",
        "B",
        "B-soft",
        "B+dedup",
        "B+dedup-naive",
        "C",
        "swe-agent",
        "claude-code",
        "nocap",
    ]
    assert data[0]["params"]["max_bytes"] == 51200 and data[0]["family"] == "paged"
    text = invoke(variants_cmd, []).stdout
    assert text.splitlines()[0].startswith("stock          [paged]  pi 0.84.1 read tool")
    assert "max_lines=400" in text


def test_read_refuses_a_fifo_and_a_device_instead_of_hanging(tmp_path):
    # issue 13, defect 8: a FIFO blocked forever and /dev/zero grew to 3.8 GB
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in ((str(fifo), "a FIFO"), ("/dev/zero", "a character device")):
        # a subprocess with a timeout, so a regression fails instead of hanging the suite
        r = subprocess.run([sys.executable, "-m", "readbench.cli", "read", path], capture_output=True, timeout=60)
        assert (r.returncode, r.stdout.decode()) == (1, f"EINVAL: not a regular file ({kind}), read '{path}'")
    r = invoke(read_cmd, ["/dev/null", "--json"])
    assert json.loads(r.stdout) == {
        "text": "EINVAL: not a regular file (a character device), read '/dev/null'", "is_error": True, "details": {}}


def test_read_refuses_a_file_above_2_gib_with_nodes_text_before_reading_it(tmp_path):
    # issue 27 probe: a sparse 2 GiB file took 60+ s and 4.2 GB of memory; pi's readFile refuses it
    big = tmp_path / "sparse.dat"
    with open(big, "wb") as fh:
        fh.truncate(2**31)
    r = invoke(read_cmd, [str(big), "--json"])
    assert json.loads(r.stdout) == {"text": "File size (2147483648) is greater than 2 GiB", "is_error": True, "details": {}}


def test_the_2_gib_bound_is_inclusive_like_nodes(tmp_path, monkeypatch):
    import readbench.read._cli as cli

    monkeypatch.setattr(cli, "NODE_MAX_FILE_BYTES", 10)
    (tmp_path / "ten").write_bytes(b"0123456789")
    (tmp_path / "eleven").write_bytes(b"0123456789a")
    assert cli.read_regular_file(str(tmp_path / "ten")) == b"0123456789"
    assert cli.read_regular_file(str(tmp_path / "eleven")) == "File size (11) is greater than 2 GiB"
