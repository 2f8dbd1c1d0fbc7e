"""B+dedup (context-aware) and B+dedup-naive: docs/specs/variants.md "B+dedup and
B+dedup-naive"; metrics.md `dedup_stubs` / `dedup_stub_misses`."""

from __future__ import annotations

from read_helpers import BIG, run

from readbench.read import ReadSession

STUB_1_800 = (
    "File unchanged since your read of lines 1-800 (call call_7); that content is already in "
    "your context."
)


def first_read(variant: str) -> ReadSession:
    s = ReadSession()
    r = run(variant, BIG, offset=1, limit=800, call_id="call_7", session=s)
    assert r.text.endswith("[1701 more lines in file. Use offset=801 to continue.]")
    return s


def test_context_aware_stubs_a_repeat_while_the_earlier_result_is_visible():
    s = first_read("B+dedup")
    r = run(
        "B+dedup",
        BIG,
        offset=1,
        limit=800,
        call_id="call_9",
        session=s,
        visible=frozenset({"call_7"}),
    )
    assert r.text == STUB_1_800
    assert r.is_error is False
    d = r.details
    assert (d.stubbed, d.stub_of_call, d.stub_miss, d.first_line, d.returned_lines) == (
        True,
        "call_7",
        False,
        None,
        0,
    )


def test_a_narrower_range_inside_an_earlier_read_is_a_repeat_naming_the_earlier_range():
    s = first_read("B+dedup")
    r = run(
        "B+dedup",
        BIG,
        offset=100,
        limit=50,
        call_id="call_9",
        session=s,
        visible=frozenset({"call_7"}),
    )
    assert r.text == STUB_1_800


def test_pruned_earlier_copy_context_aware_serves_real_text_naive_serves_a_missing_stub():
    # The history's earlier result (call_7) was pruned by DCP: it is not among the ids whose
    # results were intact in the model's last request.
    visible = frozenset({"call_8"})
    s = first_read("B+dedup")
    aware = run("B+dedup", BIG, offset=1, limit=800, call_id="call_9", session=s, visible=visible)
    assert aware.text == run("stock", BIG, offset=1, limit=800).text
    assert aware.details.stubbed is False and aware.details.last_line == 800

    s = first_read("B+dedup-naive")
    naive = run(
        "B+dedup-naive", BIG, offset=1, limit=800, call_id="call_9", session=s, visible=visible
    )
    assert naive.text == STUB_1_800
    assert (naive.details.stubbed, naive.details.stub_miss) == (True, True)


def test_context_aware_uses_the_visible_one_of_several_covering_reads():
    s = first_read("B+dedup")
    run("B+dedup", BIG, offset=1, limit=1000, call_id="call_8", session=s, visible=frozenset())
    r = run(
        "B+dedup",
        BIG,
        offset=5,
        limit=5,
        call_id="call_9",
        session=s,
        visible=frozenset({"call_7"}),
    )
    assert r.text == STUB_1_800
    r = run(
        "B+dedup",
        BIG,
        offset=5,
        limit=5,
        call_id="call_10",
        session=s,
        visible=frozenset({"call_7", "call_8"}),
    )
    assert r.text == STUB_1_800.replace("lines 1-800 (call call_7)", "lines 1-1000 (call call_8)")


def test_naive_stubs_even_without_visibility_information():
    s = first_read("B+dedup-naive")
    r = run("B+dedup-naive", BIG, offset=1, limit=800, call_id="call_9", session=s, visible=None)
    assert (r.text, r.details.stub_miss) == (STUB_1_800, False)


def test_context_aware_without_visibility_information_serves_real_text():
    s = first_read("B+dedup")
    r = run("B+dedup", BIG, offset=1, limit=800, call_id="call_9", session=s, visible=None)
    assert r.details.stubbed is False


def test_a_range_not_fully_covered_is_not_a_repeat():
    s = first_read("B+dedup-naive")
    r = run("B+dedup-naive", BIG, offset=700, limit=200, call_id="call_9", session=s)
    assert r.details.stubbed is False and (r.details.first_line, r.details.last_line) == (700, 899)


def test_after_note_file_changed_the_same_bytes_are_never_a_repeat():
    s = first_read("B+dedup-naive")
    s.note_file_changed("f.txt")
    r = run("B+dedup-naive", BIG, offset=1, limit=800, call_id="call_9", session=s)
    assert r.details.stubbed is False
    # ... but a repeat of that fresh read is.
    r = run("B+dedup-naive", BIG, offset=1, limit=800, call_id="call_10", session=s)
    assert r.text == STUB_1_800.replace("call_7", "call_9")


def test_changed_content_hash_is_never_a_repeat():
    s = first_read("B+dedup-naive")
    changed = BIG.replace(b"line 5\n", b"line five\n")
    r = run("B+dedup-naive", changed, offset=1, limit=800, call_id="call_9", session=s)
    assert r.details.stubbed is False and "line five" in r.text


def test_blocked_and_error_reads_are_never_stubbed_or_recorded():
    s = first_read("B+dedup-naive")
    assert run("B+dedup-naive", BIG, call_id="call_9", session=s).details.blocked is True
    assert run("B+dedup-naive", BIG, offset=99999, call_id="call_10", session=s).is_error is True
    assert [r.call_id for r in s.records] == ["call_7"]


def test_other_files_do_not_count():
    s = first_read("B+dedup-naive")
    r = run(
        "B+dedup-naive", BIG, offset=1, limit=800, call_id="call_9", session=s, path="other.txt"
    )
    assert r.details.stubbed is False


def test_session_round_trips_through_json_and_keeps_dedup_working():
    import json

    s = first_read("B+dedup-naive")
    s.note_file_changed("elsewhere.py")
    restored = ReadSession.from_dict(json.loads(json.dumps(s.to_dict())))
    assert restored == s
    r = run("B+dedup-naive", BIG, offset=1, limit=800, call_id="call_9", session=restored)
    assert r.text == STUB_1_800
