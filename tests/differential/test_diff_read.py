"""Differential: readbench's `stock` read variant vs pi 0.84.1's shipped read tool (issue 9).

Byte equality of the result text and equality of the error flag, over generated files
(line lengths past 51,200 bytes, unicode, CRLF, tabs, BOM, trailing newline or not, empty,
more than 2000 lines, invalid UTF-8) and offset/limit combinations (None, 0, negative, beyond
EOF, caps). Image files are outside `readbench.read` (see test_image_magic_prefix_is_pi_image).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pi_diff_gen import AGREED, FileSpec, diff_settings, js_line_count, offset_limit, text_files

pytestmark = pytest.mark.differential

BATCH = 25


def readbench_read(data: bytes, path: str, offset: int | None, limit: int | None) -> tuple[str, bool]:
    from readbench.read import ReadSession, get_variant

    result = get_variant("stock").read(data, path, offset, limit, call_id=None, session=ReadSession(), visible_call_ids=None)
    return result.text, result.is_error


def read_request(cwd: Path, path: str, offset: int | None, limit: int | None) -> dict:
    args: dict = {"path": path}
    if offset is not None:
        args["offset"] = offset
    if limit is not None:
        args["limit"] = limit
    return {"tool": "read", "cwd": str(cwd), "args": args}


def check_batch(pi_driver, cases: list[tuple[FileSpec, int | None, int | None]], case_dir: Path) -> None:
    case_dir.mkdir(parents=True, exist_ok=True)
    requests = []
    for i, (spec, offset, limit) in enumerate(cases):
        (case_dir / f"f{i}.txt").write_bytes(spec.data)
        requests.append(read_request(case_dir, f"f{i}.txt", offset, limit))
    responses = pi_driver.run(requests)
    for i, ((spec, offset, limit), pi) in enumerate(zip(cases, responses)):
        text, is_error = readbench_read(spec.data, f"f{i}.txt", offset, limit)
        where = f"input {spec!r}, path='f{i}.txt', offset={offset!r}, limit={limit!r}"
        assert pi["contentTypes"] == ["text"], f"pi returned {pi['contentTypes']} for {where}"
        assert text == pi["text"], f"text differs for {where}:\n readbench={text[-400:]!r}\n pi       ={pi['text'][-400:]!r}"
        assert is_error == pi["isError"], f"isError differs for {where}: readbench={is_error} pi={pi['isError']}"
        AGREED["read"] += 1


@st.composite
def read_case(draw: st.DrawFn) -> tuple[FileSpec, int | None, int | None]:
    spec = draw(text_files())
    offset, limit = draw(offset_limit(js_line_count(spec.data)))
    return spec, offset, limit


@diff_settings(max_examples=80)
@given(cases=st.lists(read_case(), min_size=BATCH, max_size=BATCH))
def test_stock_read_matches_pi(pi_driver, cases, tmp_path_factory):
    check_batch(pi_driver, cases, tmp_path_factory.mktemp("read"))


SPEC_EXAMPLES = [
    # pi-tools.md §1.3 observed examples, plus edge cases the generator reaches rarely.
    (b"a\nb\nc\n", 1, 3),
    (b"a\nb\nc\n", 4, None),
    (b"a\nb\nc\n", 5, None),
    (b"a\nb\nc\n", None, 0),
    (b"a\nb\nc\n", None, -2),
    (b"a\nb\nc\n", -3, 2),
    (b"".join(b"line %d\n" % i for i in range(1, 2501)), None, None),
    (b"".join(b"line %d\n" % i for i in range(1, 2501)), 2001, None),
    (b"".join(b"line %d\n" % i for i in range(1, 2501)), 100, 3000),
    (b"".join(b"line %d\n" % i for i in range(1, 2501)), None, 10),
    (b"".join(b"x" * 99 + b"\n" for _ in range(1000)), None, None),
    (b"short\n" + b"y" * 60000 + b"\nz\n", None, None),
    (b"short\n" + b"y" * 60000 + b"\nz\n", 2, None),
    (b"x\r\ny\r\n\tz\n", None, None),
    (b"\xef\xbb\xbfbom\n", None, None),
    (b"", None, None),
    (b"", 1, None),
    (b"", 2, None),
    ("\u00e9".encode() * 25_601, None, None),
    (b"\xff\xfe\x00binary\x00", None, None),
]


def test_spec_examples_match_pi(pi_driver, tmp_path):
    cases = [(FileSpec(data, "spec example"), offset, limit) for data, offset, limit in SPEC_EXAMPLES]
    check_batch(pi_driver, cases, tmp_path)


def test_missing_file_and_directory_texts_match_pi(pi_driver, tmp_path):
    """ENOENT/EISDIR texts come from the read tool adapter (readbench.tools.read)."""
    from readbench.tools.read import EISDIR_TEXT, enoent_text

    (tmp_path / "adir").mkdir()
    missing, directory = pi_driver.run([read_request(tmp_path, "missing.txt", None, None), read_request(tmp_path, "adir", None, None)])
    assert (missing["text"], missing["isError"]) == (enoent_text(os.path.join(str(tmp_path), "missing.txt")), True)
    assert (directory["text"], directory["isError"]) == (EISDIR_TEXT, True)
    AGREED["read"] += 2


def test_image_magic_prefix_is_pi_image(pi_driver, tmp_path):
    """pi 0.84.1 sniffs magic bytes: any file starting with `GIF` is an image (pi-tools.md §1.4).

    Recorded as pi's behaviour; whether readbench reproduces it is a tool-adapter decision
    (readbench.read works on text), so this test only pins pi's side of the fact.
    """
    (tmp_path / "gif.txt").write_bytes(b"GIF text file\n")
    [pi] = pi_driver.run([read_request(tmp_path, "gif.txt", None, None)])
    assert pi["text"] == "Read image file [image/gif]\n[Image omitted: could not be resized below the inline image size limit.]"
    assert pi["isError"] is False
