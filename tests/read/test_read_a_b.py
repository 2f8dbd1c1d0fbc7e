"""Variants A (character caps) and B / B-soft (refuse over-cap reads): docs/specs/variants.md."""

from __future__ import annotations

from read_helpers import BIG, HUNDRED_BYTE_LINES, LONGLINE, numbered, run

from readbench.read import get_variant

B_BIG = (
    "File has 2500 lines (23.3KB), over the 2000-line/50.0KB read limit. "
    "Read it in ranges, e.g. offset=1 limit=1000, or grep for what you need first."
)


# -- A: 1000 lines / 10,000 characters ------------------------------------------------------


def test_a_line_cap_is_1000():
    r = run("A", BIG)
    assert r.text.endswith(
        "line 1000\n\n[Showing lines 1-1000 of 2501. Use offset=1001 to continue.]"
    )
    assert r.text.count("\n") == 1001


def test_a_char_cap_names_its_unit():
    # 99 chars per line: 99 + 99 * 100 = 9,999 <= 10,000 chars, one more line would be 10,099.
    r = run("A", HUNDRED_BYTE_LINES)
    assert r.text == "\n".join(["x" * 99] * 100) + (
        "\n\n[Showing lines 1-100 of 1001 (10000 chars limit). Use offset=101 to continue.]"
    )


def test_a_counts_characters_not_bytes():
    # "é" is 1 character but 2 bytes: A keeps 100 lines, stock keeps 257 (198 + 199 * 256 bytes).
    data = ("é" * 99 + "\n").encode() * 1000
    assert "[Showing lines 1-100 of 1001 (10000 chars limit)" in run("A", data).text
    assert "[Showing lines 1-257 of 1001 (50.0KB limit)" in run("stock", data).text


def test_a_counts_astral_characters_as_two_js_units():
    # 50 emoji = 100 UTF-16 units per line: 100 + 101 * 98 = 9,998 -> 99 lines.
    data = ("\U0001f600" * 50 + "\n").encode() * 200
    assert (
        "[Showing lines 1-99 of 201 (10000 chars limit). Use offset=100 to continue.]"
        in run("A", data).text
    )


def test_a_first_line_too_long():
    r = run("A", b"y" * 10001 + b"\nz\n")
    assert (
        r.text
        == "[Line 1 is 10001 chars, exceeds 10000 chars limit. Use bash: sed -n '1p' f.txt | head -c 10000]"
    )
    assert r.is_error is False


def test_a_description_states_new_numbers_and_keeps_continue_sentence():
    assert get_variant("A").tool_description == (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
        "Images are sent as attachments. For text files, output is truncated to 1000 lines or "
        "10000 characters (whichever is hit first). Use offset/limit for large files. When you "
        "need the full file, continue with offset until complete."
    )


# -- B: refuse where stock would cut --------------------------------------------------------


def test_b_whole_big_file_is_one_line_error_with_real_numbers():
    r = run("B", BIG)
    assert r.text == B_BIG
    assert r.is_error is True
    d = r.details
    assert (d.blocked, d.capped, d.first_line, d.returned_lines, d.error) == (
        True,
        False,
        None,
        0,
        "over_cap",
    )


def test_b_suggests_the_requested_offset():
    r = run("B", BIG, offset=100, limit=3000)
    assert r.text == B_BIG.replace("offset=1 limit=1000", "offset=100 limit=1000")


def test_b_suggested_limit_shrinks_to_what_fits_the_byte_cap():
    r = run("B", HUNDRED_BYTE_LINES)
    assert r.text == (
        "File has 1000 lines (97.7KB), over the 2000-line/50.0KB read limit. "
        "Read it in ranges, e.g. offset=1 limit=512, or grep for what you need first."
    )


def test_b_within_the_cap_is_exactly_stock():
    for offset, limit in [(2001, None), (None, 10), (1, 1000), (2400, 500)]:
        assert run("B", BIG, offset, limit).text == run("stock", BIG, offset, limit).text
    assert run("B", b"a\nb\nc\n", offset=5).text == "Offset 5 is beyond end of file (4 lines total)"


def test_b_first_line_too_long_names_line_count_and_a_range_and_keeps_the_bash_hint():
    # issue 13, defect 10: B's other refusals carry the size and a range; this one did not.
    r = run("B", LONGLINE, offset=2, path="longline.txt")
    assert r.text == (
        "File has 3 lines (58.6KB); line 2 alone is 58.6KB, over the 50.0KB read limit. "
        "Read other lines in ranges, e.g. offset=3 limit=1, or this line with bash: "
        "sed -n '2p' longline.txt | head -c 51200"
    )
    assert (r.is_error, r.details.blocked, r.details.error) == (True, True, "first_line_too_long")


def test_b_long_last_line_suggests_the_lines_before_it_and_a_lone_line_only_bash():
    before = numbered(3) + b"x" * 60000
    assert run("B", before, offset=4, path="f.txt").text == (
        "File has 4 lines (58.6KB); line 4 alone is 58.6KB, over the 50.0KB read limit. "
        "Read other lines in ranges, e.g. offset=1 limit=3, or this line with bash: "
        "sed -n '4p' f.txt | head -c 51200"
    )
    assert run("B", b"x" * 60000, path="f.txt").text == (
        "File has 1 line (58.6KB); line 1 alone is 58.6KB, over the 50.0KB read limit. "
        "Use bash: sed -n '1p' f.txt | head -c 51200"
    )
    # the suggested limit is what fits the byte cap from the next line (here 512 lines of 100 bytes)
    text = run("B", b"x" * 60000 + b"\n" + HUNDRED_BYTE_LINES, path="f.txt").text
    assert "e.g. offset=2 limit=512, or this line" in text


def test_b_soft_returns_the_same_text_as_a_normal_result():
    r = run("B-soft", BIG)
    assert (r.text, r.is_error, r.details.blocked) == (B_BIG, False, True)


def test_b_description_replaces_the_continue_sentence():
    desc = get_variant("B").tool_description
    assert "continue with offset until complete" not in desc
    assert desc == (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
        "Images are sent as attachments. For text files, output is truncated to 2000 lines or "
        "50KB (whichever is hit first). Use offset/limit for large files. Read large files in "
        "targeted ranges: a read whose selection exceeds this limit returns an error with the "
        "file's line count and no content."
    )
    assert get_variant("B").prompt_lines == get_variant("stock").prompt_lines


def test_user_defined_b_1500_changes_trigger_message_and_description():
    spec = {"base": "B", "name": "B-1500", "max_lines": 1500, "suggest_limit": 500}
    v = get_variant(spec)
    assert v.name == "B-1500"
    assert "truncated to 1500 lines or 50KB" in v.tool_description
    assert run(spec, numbered_lines := ("z\n" * 1600).encode()).text == (
        "File has 1600 lines (3.1KB), over the 1500-line/50.0KB read limit. "
        "Read it in ranges, e.g. offset=1 limit=500, or grep for what you need first."
    )
    assert run(spec, numbered_lines, limit=1500).text.endswith(
        "[101 more lines in file. Use offset=1501 to continue.]"
    )


def test_nocap_returns_everything_without_any_notice():
    r = run("nocap", BIG)
    assert r.text == BIG.decode()
    assert run("nocap", BIG, limit=10).text == "".join(f"line {i}\n" for i in range(1, 11))[:-1]
    assert (
        run("nocap", BIG, offset=9999).text
        == "Offset 9999 is beyond end of file (2501 lines total)"
    )
    assert (r.details.capped, r.details.last_line) == (False, 2500)
    assert get_variant("nocap").tool_description == (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). "
        "Images are sent as attachments. For text files, the whole requested portion is returned, "
        "with no truncation. Use offset/limit for large files."
    )
