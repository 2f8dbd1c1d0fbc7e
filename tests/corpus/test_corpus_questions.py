"""Locate-and-answer and whole-file generators on a hand-written module: exact answers."""

import random

from readbench.corpus._questions import functions, locate_questions, wholefile_questions

MOD = '''\
def top(a, b=2):
    return a


class Box:
    def put(self, item, *, key="k1", force=False):
        if force:
            return 1
        if item is None:
            return 2

        def inner(key):
            return key

        return inner(key)

    def take(self, key):
        raise ValueError("empty box")

    def peek(self):
        pass

    def size(self):
        raise ValueError

    def clear(self, key=None):
        raise TypeError("no")


def lone(key, *args, **kw):
    if key:
        raise KeyError("missing key")
    return 0
'''


def test_functions_have_dotted_qualnames_in_source_order():
    import ast
    got = [(f.qualname, f.line) for f in functions(ast.parse(MOD))]
    assert got == [("top", 1), ("Box.put", 6), ("Box.put.inner", 12), ("Box.take", 17),
                   ("Box.peek", 20), ("Box.size", 23), ("Box.clear", 26), ("lone", 30)]


def _answers(qs):
    return [(q.kind, q.answer, q.target_line, q.search_key) for q in qs]


def test_locate_questions_exact_answers_past_min_line():
    qs = locate_questions(MOD, "m.py", 10, random.Random(0), min_line=5)
    got = sorted(_answers(qs))
    # every question is about a distinct function past line 5; kinds are drawn round-robin
    assert len({q.search_key for q in qs}) == len(qs)
    expected_pool = {
        ("def_line", str(n), n, f"def {name}(") for name, n in
        [("put", 6), ("inner", 12), ("take", 17), ("peek", 20), ("size", 23), ("clear", 26), ("lone", 30)]
    } | {
        ("return_count", "3", 6, "def put("),  # 2 ifs + final return; inner's return not counted
        ("default", '"k1"', 6, "def put("), ("default", "False", 6, "def put("),
        ("default", "None", 26, "def clear("),
        ("raise_msg", "empty box", 18, "def take("), ("raise_msg", "no", 27, "def clear("),
        ("raise_msg", "missing key", 32, "def lone("),
    }
    assert set(got) <= expected_pool
    # 7 functions start past line 5 and def_line is possible for each: all 7 get a question
    assert len(qs) == 7
    assert [q.kind for q in qs[:4]] == ["default", "raise_msg", "def_line", "return_count"] or \
        "return_count" not in {q.kind for q in qs}
    assert qs[0].prompt.endswith("Reply with the answer alone on a final line of the form `ANSWER: <value>`.")


def test_locate_questions_are_seed_stable():
    a = locate_questions(MOD, "m.py", 4, random.Random(3), 5)
    b = locate_questions(MOD, "m.py", 4, random.Random(3), 5)
    assert a == b


def test_wholefile_counts_are_exact():
    qs = wholefile_questions(MOD, "m.py", 20, random.Random(0))
    got = {(q.kind, q.answer) for q in qs}
    # raise ValueError: take + size = 2 (< 3, not asked); param `key`: put, inner, take, clear,
    # lone = 5; methods of Box: put, take, peek, size, clear = 5; module-level: top, lone = 2
    assert got == {("count_param", "5"), ("count_methods", "5"), ("count_toplevel", "2")}
    by_kind = {q.kind: q for q in qs}
    assert "parameter named `key`" in by_kind["count_param"].prompt
    assert "class `Box`" in by_kind["count_methods"].prompt
    assert all(q.target_line is None and q.search_key is None for q in qs)


def test_count_raise_has_a_search_key_only_when_grep_count_is_exact():
    src = "def a():\n    raise ValueError('x')\n\ndef b():\n    raise ValueError\n\n" \
          "def c():\n    raise ValueError(1)\n"
    (q,) = [q for q in wholefile_questions(src, "m.py", 5, random.Random(0)) if q.kind == "count_raise"]
    assert (q.answer, q.search_key) == ("3", "raise ValueError")
    src2 = src + "# never raise ValueError here\n"
    (q2,) = [q for q in wholefile_questions(src2, "m.py", 5, random.Random(0)) if q.kind == "count_raise"]
    assert (q2.answer, q2.search_key) == ("3", None)


def test_raise_message_target_line_is_the_message_line():
    src = "\n" * 3 + 'def f():\n    raise ValueError(\n        "long message"\n    )\n'
    qs = [q for q in locate_questions(src, "m.py", 9, random.Random(0), 0) if q.kind == "raise_msg"]
    assert [(q.answer, q.target_line) for q in qs] == [("long message", 6)]
    split = 'def g():\n    raise ValueError("a" "b")\n'
    assert [q for q in locate_questions(split, "m.py", 9, random.Random(0), 0) if q.kind == "raise_msg"] == []


def test_start_rotates_the_first_kind():
    firsts = [locate_questions(MOD, "m.py", 1, random.Random(0), 5, start=k)[0].kind for k in range(4)]
    assert firsts == ["default", "raise_msg", "def_line", "return_count"]
    whole = [wholefile_questions(MOD, "m.py", 1, random.Random(0), start=k)[0].kind for k in range(4)]
    # MOD has no raise type used 3 times: start 0 falls through to the next kind with a pool
    assert whole == ["count_param", "count_param", "count_methods", "count_toplevel"]


def test_segment_equals_the_stdlib_on_every_node_of_awkward_sources():
    """_segment splits once per text; it must return what ast.get_source_segment returns, on line
    ends the parser counts (\\r\\n, \\r, \\n) and on ones it does not (\\f, \\v, \\x1c, \\u2028),
    multi-line nodes, non-ASCII columns (byte offsets) and a last line without an end."""
    import ast

    from readbench.corpus._questions import _segment

    texts = [
        MOD,
        'x = ("é€",\r\n     "ß")\r\ny = {"a": 1,\r  "b": [2,\n 3]}\n\fz = "\u2028" + "\x1c\v"\nw = f(\n  1)',
        "def f(a='ü' , b=(1,\n 2)):\n    raise E('ok')",
        "",
    ]
    for text in texts:
        nodes = [n for n in ast.walk(ast.parse(text)) if hasattr(n, "end_lineno")]
        assert nodes or not text
        for node in nodes:
            assert _segment(text, node) == ast.get_source_segment(text, node), (text, ast.dump(node))
