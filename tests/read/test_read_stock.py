"""Stock pi read, byte for byte: every example of docs/specs/pi-tools.md §1.3 and the
text-handling rules of §1.2, plus the description and prompt lines of §2."""

from __future__ import annotations

import hashlib

import pytest
from read_helpers import BIG, HUNDRED_BYTE_LINES, LONGLINE, numbered, run

from readbench.read import ReadDetails, ReadSession, get_variant


def lines_text(a: int, b: int) -> str:
    return "\n".join(f"line {i}" for i in range(a, b + 1))


# -- pi-tools.md §1.3 observed examples -----------------------------------------------------


def test_whole_big_file_is_cut_at_2000_lines_with_continuation_notice():
    r = run("stock", BIG)
    assert (
        r.text
        == lines_text(1, 2000) + "\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    )
    assert r.is_error is False
    d = r.details
    assert (d.first_line, d.last_line, d.returned_lines, d.total_lines) == (1, 2000, 2000, 2500)
    assert d.capped and not d.blocked and not d.stubbed and not d.mapped


def test_offset_2001_returns_the_tail_with_its_final_newline_and_no_notice():
    r = run("stock", BIG, offset=2001)
    assert r.text == lines_text(2001, 2500) + "\n"
    assert (r.details.first_line, r.details.last_line, r.details.capped) == (2001, 2500, False)


def test_limit_larger_than_cap_still_cut_by_the_line_cap():
    r = run("stock", BIG, offset=100, limit=3000)
    assert (
        r.text
        == lines_text(100, 2099)
        + "\n\n[Showing lines 100-2099 of 2501. Use offset=2100 to continue.]"
    )


def test_user_limit_notice_counts_the_phantom_line():
    r = run("stock", BIG, limit=10)
    assert r.text == lines_text(1, 10) + "\n\n[2491 more lines in file. Use offset=11 to continue.]"
    assert (r.details.first_line, r.details.last_line, r.details.capped) == (1, 10, False)


def test_abc_limit_3_reports_a_phantom_fourth_line():
    r = run("stock", b"a\nb\nc\n", offset=1, limit=3)
    assert r.text == "a\nb\nc\n\n[1 more lines in file. Use offset=4 to continue.]"


def test_abc_offset_on_the_phantom_line_is_empty_text_not_an_error():
    r = run("stock", b"a\nb\nc\n", offset=4)
    assert r.text == ""
    assert r.is_error is False
    assert (r.details.first_line, r.details.last_line, r.details.returned_lines) == (None, None, 0)


def test_abc_offset_past_the_end_is_an_error_counting_t():
    r = run("stock", b"a\nb\nc\n", offset=5)
    assert r.text == "Offset 5 is beyond end of file (4 lines total)"
    assert r.is_error is True
    assert r.details.error == "beyond_eof"


def test_abc_limit_0_is_an_empty_read_plus_the_more_lines_notice():
    r = run("stock", b"a\nb\nc\n", limit=0)
    assert r.text == "\n\n[4 more lines in file. Use offset=1 to continue.]"


def test_byte_cap_keeps_512_lines_of_100_bytes():
    r = run("stock", HUNDRED_BYTE_LINES)
    expected_body = "\n".join(["x" * 99] * 512)
    assert (
        r.text
        == expected_body
        + "\n\n[Showing lines 1-512 of 1001 (50.0KB limit). Use offset=513 to continue.]"
    )
    assert r.details.last_line == 512


def test_byte_cap_stops_before_an_oversized_second_line():
    r = run("stock", LONGLINE, path="longline.txt")
    assert r.text == "short\n\n[Showing lines 1-1 of 4 (50.0KB limit). Use offset=2 to continue.]"


def test_first_line_too_long_message_uses_the_raw_path():
    r = run("stock", LONGLINE, offset=2, path="longline.txt")
    assert (
        r.text
        == "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' longline.txt | head -c 51200]"
    )
    assert r.is_error is False
    assert r.details.capped is True and r.details.first_line is None


def test_first_line_message_keeps_a_path_with_spaces_unquoted():
    r = run("stock", LONGLINE, offset=2, path="./my dir/long line.txt")
    assert r.text.endswith("Use bash: sed -n '2p' ./my dir/long line.txt | head -c 51200]")


# -- pi-tools.md §1.2: selection, counting and text handling -------------------------------


@pytest.mark.parametrize("offset", [0, -5, None, 1])
def test_offset_zero_negative_and_missing_all_mean_line_one(offset):
    assert run("stock", b"a\nb\n", offset=offset).text == "a\nb\n"


def test_negative_offset_past_nothing_never_errors_and_prints_raw_offset_when_beyond():
    assert run("stock", b"", offset=2).text == "Offset 2 is beyond end of file (1 lines total)"


def test_empty_file_is_empty_text_with_t_equal_1():
    r = run("stock", b"")
    assert (r.text, r.is_error, r.details.total_lines, r.details.first_line) == ("", False, 0, None)
    assert (
        run("stock", b"", limit=0).text == "\n\n[1 more lines in file. Use offset=1 to continue.]"
    )


def test_bom_cr_and_tabs_pass_through_untouched():
    data = "\ufeffx\r\ny\r\n\tz\n".encode()
    assert run("stock", data).text == "\ufeffx\r\ny\r\n\tz\n"


def test_invalid_utf8_becomes_one_replacement_per_maximal_subpart():
    # E2 82 is a truncated 3-byte sequence: one U+FFFD (WHATWG); F0 80 80: three (80 is not
    # a valid second byte after F0); a lone FF: one.
    data = b"a\xe2\x82b\nc\xf0\x80\x80d\n\xff\n"
    assert run("stock", data).text == "a\ufffdb\nc\ufffd\ufffd\ufffdd\n\ufffd\n"


def test_bytes_are_counted_in_utf8_of_the_decoded_text():
    # 12,800 four-byte characters are exactly 51,200 bytes: the line fits, "z" does not.
    exact = "\U0001f600" * 12800
    r = run("stock", (exact + "\nz").encode())
    assert (
        r.text == exact + "\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue.]"
    )
    # One more character (51,204 bytes) and the first line alone is over the cap.
    assert run("stock", (exact + "\U0001f600\nz").encode()).text == (
        "[Line 1 is 50.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' f.txt | head -c 51200]"
    )


def test_first_line_size_of_a_megabyte_line_prints_in_mb():
    # Line 2 is 1,049,856 bytes = 1.0009765625 MiB -> "1.0MB"; the cap label stays 50.0KB.
    r = run("stock", b"a\n" + b"x" * 1_049_856 + b"\n", offset=2)
    assert r.text.startswith("[Line 2 is 1.0MB, exceeds 50.0KB limit.")


def test_exactly_2000_lines_with_final_newline_is_not_cut():
    data = numbered(2000)
    r = run("stock", data)
    assert r.text == data.decode()
    assert r.details.capped is False and r.details.last_line == 2000


def test_2001_lines_without_final_newline_is_cut_at_2000():
    data = numbered(2001)[:-1]
    r = run("stock", data)
    assert r.text.endswith(
        "line 2000\n\n[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]"
    )


def test_final_newline_byte_over_the_cap_points_at_the_phantom_line():
    # The lines fill exactly 51,200 bytes and only the trailing newline byte is over: every
    # line fits, so pi labels it a line-cap notice and points at the phantom line T.
    body = "\n".join(["y" * 99] * 511 + ["y" * 100])  # 511 * 100 + 100 = 51,200 bytes
    assert len(body.encode()) == 51200
    r = run("stock", (body + "\n").encode())
    assert r.text == body + "\n\n[Showing lines 1-512 of 513. Use offset=513 to continue.]"
    assert run("stock", (body + "\n").encode(), offset=513).text == ""


def test_negative_limit_follows_js_slice_from_the_end():
    # slice(0, -1) of ["a","b","c",""] is a,b,c; userLimitedLines = -1 -> "5 more lines", offset=0.
    r = run("stock", b"a\nb\nc\n", limit=-1)
    assert r.text == "a\nb\nc\n\n[5 more lines in file. Use offset=0 to continue.]"


def test_limit_beyond_eof_has_no_notice():
    assert run("stock", b"a\nb\n", limit=50).text == "a\nb\n"


def test_float_offset_from_json_is_accepted_when_integral_and_rejected_otherwise():
    assert run("stock", b"a\nb\n", offset=2.0).text == "b\n"  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="offset must be an integer"):
        run("stock", b"a\nb\n", offset=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit must be an integer"):
        run("stock", b"a\nb\n", limit=True)


# -- pi-tools.md §2: tool description and prompt lines -------------------------------------


def test_description_is_pi_verbatim():
    assert get_variant("stock").tool_description == (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
        "Images are sent as attachments. For text files, output is truncated to 2000 lines or "
        "50KB (whichever is hit first). Use offset/limit for large files. When you need the full "
        "file, continue with offset until complete."
    )


def test_prompt_lines_are_pi_snippet_and_guideline():
    v = get_variant("stock")
    assert v.prompt_lines == [
        "- read: Read file contents",
        "Use read to examine files instead of cat or sed.",
    ]
    assert v.requires_read_before_edit is False


def test_successful_reads_are_recorded_in_the_session_and_errors_are_not():
    s = ReadSession()
    run("stock", BIG, call_id="c1", session=s, path="./big.txt")
    run("stock", BIG, offset=9999, call_id="c2", session=s, path="big.txt")
    assert s.has_read("big.txt") and s.has_read("./big.txt")
    assert [(r.call_id, r.ranges) for r in s.records] == [("c1", ((1, 2000),))]


def test_details_to_dict_is_json_ready():
    d = run("stock", b"a\nb\n", offset=2, call_id="x").details.to_dict()
    assert d == {
        "variant": "stock",
        "path": "f.txt",
        "offset": 2,
        "limit": None,
        "call_id": "x",
        "first_line": 2,
        "last_line": 2,
        "total_lines": 2,
        "file_bytes": 4,
        "returned_lines": 1,
        "line_ranges": [[2, 2]],
        "capped": False,
        "blocked": False,
        "stubbed": False,
        "stub_of_call": None,
        "stub_miss": False,
        "mapped": False,
        "map_call": None,
        "content_sha256": hashlib.sha256(b"a\nb\n").hexdigest(),
        "error": None,
    }


def test_details_round_trip_and_reject_unknown_fields():
    d = run("stock", BIG, call_id="x").details
    assert ReadDetails.from_dict(d.to_dict()) == d
    with pytest.raises(ValueError, match=r"unknown ReadDetails fields: \['bogus'\]"):
        ReadDetails.from_dict({**d.to_dict(), "bogus": 1})


def test_pi_084_reads_any_file_starting_with_gif_as_an_image():
    r = run("stock", b"GIF is a format\nline2\n", offset=9)
    assert r.text == (
        "Read image file [image/gif]\n"
        "[Image omitted: could not be resized below the inline image size limit.]"
    )
    assert (r.is_error, r.details.first_line) == (False, None)
    fixed = {"base": "stock", "name": "stock-0.87", "gif_quirk": False}
    assert run(fixed, b"GIF is a format\n").text == "GIF is a format\n"
