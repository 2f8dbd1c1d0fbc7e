"""readbench.tools.pi.edit: pi 0.84.1's edit semantics (docs/specs/pi-tools.md §4), exact texts.

Expected strings were checked against the shipped package (tests/differential/test_diff_edit.py
runs the same rules against it on generated inputs).
"""

from __future__ import annotations

import pytest

from readbench.tools.pi.edit import EditArgs, PiEditError, apply_edits, missing_file_text, normalize_edit_args


def edit(content: bytes | str, *pairs: tuple[str, str], path: str = "f.py"):
    return apply_edits(content, path, [{"oldText": old, "newText": new} for old, new in pairs])


def test_exact_replacement_reports_block_count():
    out = edit(b"a\nb\nc\n", ("b", "B"))
    assert out.ok and out.new_content == b"a\nB\nc\n"
    assert out.success_text == "Successfully replaced 1 block(s) in f.py."
    assert out.n_blocks == 1


def test_multi_edit_matches_against_original_not_incrementally():
    out = edit(b"x = 1\ny = 2\n", ("x = 1", "y = 2"), ("y = 2", "z = 3"))
    assert out.new_content == b"y = 2\nz = 3\n"
    assert out.success_text == "Successfully replaced 2 block(s) in f.py."


def test_bom_and_crlf_are_restored():
    out = edit(b"\xef\xbb\xbfa\r\nb\r\n", ("a\nb", "x\ny"))
    assert out.new_content == b"\xef\xbb\xbfx\r\ny\r\n"


def test_crlf_old_text_matches_lf_normalised_file():
    assert edit(b"a\r\nb\r\n", ("a\r\nb", "c")).new_content == b"c\r\n"


def test_line_ending_detected_from_first_newline_only():
    # First newline is a bare LF, so the file is treated as LF and CRLF is not restored.
    assert edit(b"a\nb\r\nc\r\n", ("c", "C")).new_content == b"a\nb\nC\n"


def test_fuzzy_match_smart_quotes_dashes_spaces_and_trailing_whitespace():
    content = "say \u201chi\u201d \u2014 ok  \nnext\u00a0line\nkeep\u2019s  \n".encode()
    out = edit(content, ('say "hi" - ok\nnext line', "done"))
    # Only the touched lines are rewritten; the untouched line keeps its curly quote and spaces.
    assert out.new_content == "done\nkeep\u2019s  \n".encode()


def test_fuzzy_mode_rewrites_touched_lines_from_normalised_text():
    out = edit("a\u2014b  \nc\n".encode(), ("a-b", "x"))
    assert out.new_content == b"x\nc\n"


def test_not_found_texts_single_and_multi():
    assert edit(b"abc\n", ("zz", "x")).error_text == (
        "Could not find the exact text in f.py. The old text must match exactly including all whitespace and newlines."
    )
    assert edit(b"abc\n", ("a", "x"), ("zz", "y")).error_text == (
        "Could not find edits[1] in f.py. The oldText must match exactly including all whitespace and newlines."
    )


def test_duplicate_texts_single_and_multi():
    assert edit(b"x\nx\n", ("x", "y")).error_text == (
        "Found 2 occurrences of the text in f.py. The text must be unique. Please provide more context to make it unique."
    )
    assert edit(b"x\nx\ny\n", ("y", "z"), ("x", "y")).error_text == (
        "Found 2 occurrences of edits[1] in f.py. Each oldText must be unique. Please provide more context to make it unique."
    )


def test_uniqueness_is_counted_in_fuzzy_space_even_for_exact_matches():
    # "a\nx" occurs once exactly, but twice once trailing whitespace is stripped.
    assert edit(b"a \nx\na\nx\n", ("a\nx", "q")).error_text == (
        "Found 2 occurrences of the text in f.py. The text must be unique. Please provide more context to make it unique."
    )


def test_whitespace_only_old_text_counts_like_js_split_empty():
    # fuzzy(" ") is "", and JS s.split("") has one element per UTF-16 unit: the fuzzy content
    # "ab\nab\n" has 6 units -> 5 "occurrences" (pi prints 5 for this input).
    assert edit(b"ab  \nab\n", (" ", "_")).error_text == (
        "Found 5 occurrences of the text in f.py. The text must be unique. Please provide more context to make it unique."
    )


def test_overlap_text():
    assert edit(b"abcdef\n", ("abc", "1"), ("cde", "2")).error_text == (
        "edits[0] and edits[1] overlap in f.py. Merge them into one edit or target disjoint regions."
    )


def test_empty_old_text_single_and_multi():
    assert edit(b"abc\n", ("", "1")).error_text == "oldText must not be empty in f.py."
    assert edit(b"abc\n", ("b", "1"), ("", "2")).error_text == "edits[1].oldText must not be empty in f.py."


def test_identical_result_single_and_multi():
    assert edit(b"abc\n", ("b", "b")).error_text == (
        "No changes made to f.py. The replacement produced identical content. "
        "This might indicate an issue with special characters or the text not existing as expected."
    )
    assert edit(b"abc\n", ("a", "a"), ("c", "c")).error_text == (
        "No changes made to f.py. The replacements produced identical content."
    )


def test_fuzzy_match_that_changes_line_count_is_pi_error():
    # Fuzzy normalisation drops the whitespace-only last line, so pi cannot map lines back.
    assert edit(b"a\n  ", ("a\u00a0", "b")).error_text == (
        "Cannot preserve unchanged lines because the base content has a different line count."
    )


def test_invalid_utf8_is_written_back_as_replacement_characters():
    assert edit(b"\xff\xfeab\n", ("ab", "cd")).new_content == b"\xef\xbf\xbd\xef\xbf\xbdcd\n"


def test_empty_edit_list_is_pi_input_error():
    out = apply_edits(b"abc", "f.py", [])
    assert out.error_text == "Edit tool input is invalid. edits must contain at least one replacement."


def test_apply_edits_rejects_malformed_edit_dicts():
    with pytest.raises(ValueError, match=r"edits\[0\] must be a dict with string oldText and newText"):
        apply_edits(b"abc", "f.py", [{"oldText": "a"}])


def test_missing_file_text():
    assert missing_file_text("src/x.py") == "Could not edit file: src/x.py. Error code: ENOENT."


# --- normalize_edit_args ---


def test_args_array_form():
    assert normalize_edit_args({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}) == EditArgs("a", (("x", "y"),))


def test_args_edits_as_json_string():
    args = {"path": "a", "edits": '[{"oldText": "x", "newText": "y"}]'}
    assert normalize_edit_args(args) == EditArgs("a", (("x", "y"),))


def test_args_legacy_top_level_pair_is_appended_last():
    args = {"path": "a", "edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y"}
    assert normalize_edit_args(args) == EditArgs("a", (("1", "2"), ("x", "y")))
    assert normalize_edit_args({"path": "a", "oldText": "x", "newText": "y"}) == EditArgs("a", (("x", "y"),))


def test_args_single_object_is_accepted_in_0841_via_typebox_convert():
    # pi-tools.md §4 says 0.84.1 rejects it; the shipped 0.84.1 (pi-ai 0.84.1 Value.Convert) wraps it.
    assert normalize_edit_args({"path": "a", "edits": {"oldText": "x", "newText": "y"}}) == EditArgs("a", (("x", "y"),))


def test_args_scalars_convert_to_js_strings():
    args = {"path": 5, "edits": [{"oldText": None, "newText": 1.5e300}, {"oldText": True, "newText": -0.0}]}
    assert normalize_edit_args(args) == EditArgs("5", (("null", "1.5e+300"), ("true", "0")))


def test_args_validation_error_text():
    with pytest.raises(PiEditError) as error:
        normalize_edit_args({"edits": [{"oldText": "c"}, 7]})
    assert str(error.value) == (
        'Validation failed for tool "edit":\n'
        "  - path: must have required properties path\n"
        "  - edits.0.newText: must have required properties newText\n"
        "  - edits.1: must be object\n"
        "\n"
        "Received arguments:\n"
        '{\n  "edits": [\n    {\n      "oldText": "c"\n    },\n    7\n  ]\n}'
    )


def test_args_missing_everything_lists_all_required():
    with pytest.raises(PiEditError) as error:
        normalize_edit_args({})
    assert str(error.value) == (
        'Validation failed for tool "edit":\n  - path: must have required properties path, edits\n\nReceived arguments:\n{}'
    )


def test_args_unparseable_json_string_is_wrapped_then_rejected():
    with pytest.raises(PiEditError) as error:
        normalize_edit_args({"path": "a", "edits": "not json"})
    assert str(error.value) == (
        'Validation failed for tool "edit":\n  - edits.0: must be object\n\n'
        'Received arguments:\n{\n  "path": "a",\n  "edits": "not json"\n}'
    )


def test_args_object_field_is_not_a_string():
    with pytest.raises(PiEditError, match=r"  - edits\.0\.newText: must be string\n"):
        normalize_edit_args({"path": "a", "edits": [{"oldText": "x", "newText": {"a": 1}}]})


def test_args_empty_edits_is_input_error():
    with pytest.raises(PiEditError) as error:
        normalize_edit_args({"path": "a", "edits": []})
    assert str(error.value) == "Edit tool input is invalid. edits must contain at least one replacement."


def test_args_must_be_a_dict():
    with pytest.raises(TypeError, match="edit arguments must be a dict"):
        normalize_edit_args(["a"])


def test_args_json_string_with_nan_is_not_json_as_in_js():
    with pytest.raises(PiEditError) as error:
        normalize_edit_args({"path": "a", "edits": "[NaN]"})
    assert str(error.value).endswith('Received arguments:\n{\n  "path": "a",\n  "edits": "[NaN]"\n}')
