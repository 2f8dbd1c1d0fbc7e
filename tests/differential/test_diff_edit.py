"""Differential: readbench.tools.pi.edit vs pi 0.84.1's shipped edit tool (issue 9).

Each case writes a generated file, sends generated edit arguments to pi's edit tool (through
prepareArguments and pi-ai's validation, as pi's agent loop does) and compares the result text,
the error flag and the file's bytes afterwards with `normalize_edit_args` + `apply_edits`.
The edits are cut from the file (exact matches), then perturbed toward pi's fuzzy matching
(smart quotes, dashes, special spaces, trailing whitespace, NFKD, CRLF), or made empty, identical,
duplicated or overlapping; the arguments sometimes use the JSON-string, legacy and single-object forms.
"""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pi_diff_gen import AGREED, FileSpec, diff_settings, random_text, text_files

from readbench.tools.pi.edit import PiEditError, apply_edits, missing_file_text, normalize_edit_args

pytestmark = pytest.mark.differential

BATCH = 25
EISDIR = "EISDIR: illegal operation on a directory, read"


def readbench_edit(case_dir: Path, args: dict, data: bytes) -> tuple[str, bool, bytes]:
    """What a pi-faithful edit adapter returns: (text, is_error, file bytes afterwards)."""
    try:
        parsed = normalize_edit_args(args)
    except PiEditError as error:
        return str(error), True, data
    target = case_dir / parsed.path if parsed.path else case_dir
    if not target.exists():
        return missing_file_text(parsed.path), True, data
    if target.is_dir():
        return EISDIR, True, data
    outcome = apply_edits(data, parsed.path, parsed)
    if not outcome.ok:
        return outcome.error_text, True, data
    return outcome.success_text, False, outcome.new_content


def _fuzz(text: str, rng: random.Random) -> str:
    """Perturb `text` the way models do, toward what pi's fuzzy matching forgives."""
    how = rng.choice(["quotes", "dashes", "spaces", "trailing", "nfkd", "asciify", "crlf", "lf"])
    if how == "quotes":
        return text.replace("'", "\u2019").replace('"', "\u201c")
    if how == "dashes":
        return text.replace("-", "\u2014")
    if how == "spaces":
        return text.replace(" ", "\u00a0")
    if how == "trailing":
        return text.replace("\n", "  \n")
    if how == "nfkd":
        return unicodedata.normalize("NFKD", text)
    if how == "asciify":
        table = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "})
        return "\n".join(line.rstrip(" \t\u3000\u2009") for line in text.translate(table).split("\n"))
    if how == "crlf":
        return text.replace("\n", "\r\n")
    return text.replace("\r\n", "\n")


def _old_text(text: str, rng: random.Random) -> str:
    kind = rng.choices(["slice", "fuzzed", "char", "random", "empty", "line"], weights=[10, 8, 1, 1, 0.5, 1.5])[0]
    if kind == "empty":
        return ""
    if kind == "random" or not text:
        return random_text(rng, 6) or "?"
    if kind == "char":
        return rng.choice(text)
    if kind == "line":
        return rng.choice(text.split("\n"))
    start = rng.randrange(len(text))
    piece = text[start : start + rng.choice([3, 8, 20, 20, 60, 60, 200])]
    return _fuzz(piece, rng) if kind == "fuzzed" else piece


def _new_text(old: str, rng: random.Random) -> str:
    kind = rng.choice(["random", "random", "same", "append", "crlf", "empty"])
    if kind == "same":
        return old
    if kind == "append":
        return old + "X"
    if kind == "crlf":
        return "new\r\nlines\n"
    if kind == "empty":
        return ""
    return random_text(rng, 8)


def make_args(path: str, text: str, rng: random.Random) -> dict:
    """Edit arguments in one of pi's accepted forms."""
    edits = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 3])):
        old = _old_text(text, rng)
        edits.append({"oldText": old, "newText": _new_text(old, rng)})
    form = rng.choice(["array"] * 6 + ["json-string", "legacy", "legacy+array", "single-object"])
    if form == "json-string":
        return {"path": path, "edits": json.dumps(edits)}
    if form == "legacy":
        return {"path": path, **edits[0]}
    if form == "legacy+array" and len(edits) > 1:
        return {"path": path, "edits": edits[1:], **edits[0]}
    if form == "single-object":
        return {"path": path, "edits": edits[0]}
    return {"path": path, "edits": edits}


@st.composite
def edit_case(draw: st.DrawFn) -> tuple[FileSpec, int]:
    long_lines = draw(st.integers(0, 5)) == 0
    return draw(text_files(max_small_lines=10, allow_long=long_lines)), draw(st.integers(0, 2**32 - 1))


def check_batch(pi_driver, cases: list[tuple[FileSpec, dict]], case_dir: Path) -> None:
    case_dir.mkdir(parents=True, exist_ok=True)
    requests = []
    for i, (spec, args) in enumerate(cases):
        (case_dir / f"e{i}.txt").write_bytes(spec.data)
        requests.append({"tool": "edit", "cwd": str(case_dir), "args": args, "returnFile": str(case_dir / f"e{i}.txt")})
    responses = pi_driver.run(requests)
    for i, ((spec, args), pi) in enumerate(zip(cases, responses)):
        text, is_error, after = readbench_edit(case_dir, args, spec.data)
        where = f"input {spec!r}, args={args!r}"
        assert text == pi["text"], f"text differs for {where}:\n readbench={text!r}\n pi       ={pi['text']!r}"
        assert is_error == pi["isError"], f"isError differs for {where}"
        assert after == pi["fileAfter"], f"file after edit differs for {where}:\n readbench={after[:400]!r}\n pi       ={pi['fileAfter'][:400]!r}"
        AGREED["edit"] += 1


@diff_settings(max_examples=60)
@given(cases=st.lists(edit_case(), min_size=BATCH, max_size=BATCH))
def test_edit_matches_pi(pi_driver, cases, tmp_path_factory):
    built = []
    for i, (spec, seed) in enumerate(cases):
        text = spec.data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        built.append((spec, make_args(f"e{i}.txt", text, random.Random(seed))))
    check_batch(pi_driver, built, tmp_path_factory.mktemp("edit"))


FIXED = [
    # (file bytes, args) for each error text and normalisation rule in pi-tools.md §4.
    (b"a\nb\nc\n", {"edits": [{"oldText": "b", "newText": "B"}]}),
    (b"a\nb\nc\n", {"edits": [{"oldText": "zz", "newText": "x"}]}),
    (b"a\nb\nc\n", {"edits": [{"oldText": "a", "newText": "x"}, {"oldText": "zz", "newText": "y"}]}),
    (b"x\nx\n", {"edits": [{"oldText": "x", "newText": "y"}]}),
    (b"x\nx\ny\n", {"edits": [{"oldText": "y", "newText": "z"}, {"oldText": "x", "newText": "y"}]}),
    (b"abcdef\n", {"edits": [{"oldText": "abc", "newText": "1"}, {"oldText": "cde", "newText": "2"}]}),
    (b"abc\n", {"edits": [{"oldText": "", "newText": "1"}]}),
    (b"abc\n", {"edits": [{"oldText": "b", "newText": "1"}, {"oldText": "", "newText": "2"}]}),
    (b"abc\n", {"edits": [{"oldText": "b", "newText": "b"}]}),
    (b"abc\n", {"edits": [{"oldText": "a", "newText": "a"}, {"oldText": "c", "newText": "c"}]}),
    (b"\xef\xbb\xbfa\r\nb\r\n", {"edits": [{"oldText": "a\nb", "newText": "x\ny"}]}),
    ("say \u201chi\u201d \u2014 ok  \nnext\u00a0line\n".encode(), {"edits": [{"oldText": 'say "hi" - ok\nnext line', "newText": "done"}]}),
    ("keep\u2019s  \nsay \u201chi\u201d\n".encode(), {"edits": [{"oldText": 'say "hi"', "newText": "bye"}]}),
    (b"a \nx\na\nx\n", {"edits": [{"oldText": "a\nx", "newText": "q"}]}),
    (b"a\n  ", {"edits": [{"oldText": "a\u00a0", "newText": "b"}]}),
    (b"ab  \nab\n", {"edits": [{"oldText": " ", "newText": "_"}]}),
    (b"abc\n", {"edits": "[{\"oldText\": \"b\", \"newText\": \"B\"}]"}),
    (b"abc\n", {"edits": "not json"}),
    (b"abc\n", {"edits": "[NaN]"}),
    (b"abc\n", {"edits": {"oldText": "b", "newText": "B"}}),
    (b"abc\n", {"oldText": "b", "newText": "B"}),
    (b"abc\n", {"edits": [{"oldText": "a", "newText": "A"}], "oldText": "c", "newText": "C"}),
    (b"abc\n", {"edits": []}),
    (b"abc\n", {"edits": [{"oldText": 5, "newText": True}]}),
    (b"null\n", {"edits": [{"oldText": None, "newText": 1.5}]}),
    (b"abc\n", {"edits": [{"oldText": "a"}, 7, [1], None]}),
    (b"abc\n", {}),
    (b"\xff\xfeab\n", {"edits": [{"oldText": "ab", "newText": "cd"}]}),
]


def test_fixed_edit_cases_match_pi(pi_driver, tmp_path):
    cases = []
    for data, args in FIXED:
        with_path = {"path": "e0.txt", **args} if "path" not in args and args else dict(args)
        cases.append((FileSpec(data, "fixed"), with_path))
    for i in range(len(cases)):  # one directory per case: every case edits e0.txt
        check_batch(pi_driver, [cases[i]], tmp_path / str(i))


@pytest.mark.parametrize("path", [5, None, True, "", "missing.txt", 1.5, ["e0.txt"], {"p": 1}])
def test_odd_paths_match_pi(pi_driver, tmp_path, path):
    check_batch(pi_driver, [(FileSpec(b"abc\n", "fixed"), {"path": path, "edits": [{"oldText": "b", "newText": "B"}]})], tmp_path)
