"""readbench.tools.pi.bash: pi 0.84.1's bash output text (docs/specs/pi-tools.md §3.1), exact texts."""

from __future__ import annotations

import pytest

from readbench.tools.pi.bash import format_bash_output, validate_bash_timeout

P = "/tmp/pi-bash-0123456789abcdef.log"


def text(output, exit_code=0, **kw) -> tuple[str, bool]:
    result = format_bash_output(output, exit_code, full_output_path=P, **kw)
    return result.text, result.is_error


def test_plain_output_is_returned_raw():
    assert text(b"hi\n") == ("hi\n", False)


def test_empty_output():
    assert text(b"") == ("(no output)", False)


def test_nonzero_exit_appends_status_and_is_error():
    assert text(b"out\nerr\n", 2) == ("out\nerr\n\n\nCommand exited with code 2", True)
    assert text(b"", 3) == ("(no output)\n\nCommand exited with code 3", True)


def test_missing_exit_code_is_success_in_0841():
    assert text(b"x", None) == ("x", False)


def test_timeout_text_uses_js_number_format():
    assert text(b"hi\n", None, timed_out=True, timeout_seconds=0.5) == ("hi\n\n\nCommand timed out after 0.5 seconds", True)
    assert text(b"", None, timed_out=True, timeout_seconds=1e-7) == ("Command timed out after 1e-7 seconds", True)
    assert text(b"", None, timed_out=True, timeout_seconds=30.0) == ("Command timed out after 30 seconds", True)


def test_abort_text():
    assert text(b"partial", None, aborted=True) == ("partial\n\nCommand aborted", True)
    assert text(b"", None, aborted=True) == ("Command aborted", True)


def test_line_cap_keeps_last_2000_lines():
    out, is_error = text(b"".join(b"%d\n" % i for i in range(1, 2502)))
    assert out.startswith("502\n503\n")
    assert out.endswith(f"2501\n\n[Showing lines 502-2501 of 2501. Full output: {P}]")
    assert is_error is False


def test_byte_cap_keeps_whole_lines_from_the_end():
    out, _ = text(b"".join(b"x" * 99 + b"\n" for _ in range(1000)))
    # 512 lines of 99 bytes + 511 newlines = 51,199 bytes fit; a 513th would not.
    assert out == "\n".join(["x" * 99] * 512) + f"\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: {P}]"


def test_partial_last_line_notice_sizes_the_unterminated_line():
    out, _ = text(b"x" * 60_000)
    assert out == "x" * 51_200 + f"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {P}]"


def test_partial_last_line_quirk_prints_0B_when_output_ends_in_newline():  # noqa: N802 - "0B" is pi's text
    out, _ = text(b"x" * 60_000 + b"\n")
    assert out == "x" * 51_200 + f"\n\n[Showing last 50.0KB of line 1 (line is 0B). Full output: {P}]"


def test_rolling_tail_drops_a_cut_line_above_200kb():
    # pi keeps ~100 KB of decoded tail; the cut-off 250 KB line is dropped from the snapshot, so
    # the kept text is "last\n" (untruncated tail) with pi's totals: 2 lines, byte-capped.
    out, _ = text(b"z" * 250_000 + b"\nlast\n")
    assert out == f"last\n\n\n[Showing lines 2-2 of 2 (50.0KB limit). Full output: {P}]"


def test_chunks_split_utf8_sequences_and_bom_is_dropped():
    assert text([b"\xef\xbb", b"\xbfcaf\xc3", b"\xa9\n"]) == ("caf\u00e9\n", False)
    assert text([b"\xff", b"ok\n"]) == ("\ufffdok\n", False)


def test_timed_out_needs_the_timeout_value():
    with pytest.raises(ValueError, match="timeout_seconds"):
        format_bash_output(b"", None, timed_out=True)


@pytest.mark.parametrize(
    ("timeout", "expected"),
    [
        (None, None),
        (0.5, None),
        (2147483.647, None),
        (0, "Invalid timeout: must be a finite number of seconds"),
        (-1, "Invalid timeout: must be a finite number of seconds"),
        (float("inf"), "Invalid timeout: must be a finite number of seconds"),
        (2147483.648, "Invalid timeout: maximum is 2147483.647 seconds"),
    ],
)
def test_timeout_validation(timeout, expected):
    assert validate_bash_timeout(timeout) == expected
