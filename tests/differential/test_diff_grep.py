"""Differential: readbench.tools.pi.grep vs pi 0.84.1's shipped grep tool (issue 9).

Each example builds a small tree (nested dirs, a hidden file, a `..dots` dir, CRLF, long and
non-UTF-8 lines, an `.ignore` file) and runs generated searches through pi's grep tool and
through `rg_argv` + the same ripgrep binary + `format_grep`. Both ripgreps read a config with
`--sort=path` (conftest), so match order is the same on both sides.
"""

from __future__ import annotations

import os
import posixpath
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pi_diff_gen import AGREED, diff_settings, random_text, text_files
from pi_driver_client import rg_binary

from readbench.base.js import decode_utf8
from readbench.tools.pi.grep import format_grep, path_not_found_text, rg_argv

pytestmark = [
    pytest.mark.differential,
    pytest.mark.skipif(
        rg_binary() is None and not os.environ.get("READBENCH_REQUIRE_DIFFERENTIAL"),
        reason="differential grep: ripgrep (rg) not installed (pip install ripgrep)",
    ),
]

PATTERNS = ["a", "x", "e", ".", "$", "^", "\\w+", "a|b", "[0-9]", "é", "\U0001f600", "—", "(", "[", "\\", "X", "abc", "-", " "]
GLOBS = [None, None, "*.txt", "**/*.md", "sub/*", "!*.md", ""]
PATHS = [None, None, ".", "sub", "f0.txt", "sub/deep/f2.md", "missing", "..dots"]


def build_tree(root: Path, files: list[bytes]) -> None:
    names = ["f0.txt", "f1.txt", "sub/deep/f2.md", "sub/f3.txt", ".hidden.txt", "..dots/f5.txt", "ignored1.txt"]
    for name, data in zip(names, files):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / ".ignore").write_text("ignored*.txt\n")


def readbench_grep(cwd: Path, args: dict, env: dict) -> tuple[str, bool]:
    """What a pi-faithful grep adapter returns, using a real ripgrep."""
    search_path = posixpath.normpath(posixpath.join(str(cwd), args.get("path") or "."))
    if not os.path.exists(search_path):
        return path_not_found_text(search_path), True
    argv = rg_argv(
        args["pattern"],
        search_path,
        glob=args.get("glob"),
        ignore_case=bool(args.get("ignoreCase")),
        literal=bool(args.get("literal")),
        rg=rg_binary(),
    )
    done = subprocess.run(argv, capture_output=True, env=env, timeout=60)

    def read_file(path: str) -> bytes | None:
        try:
            return Path(path).read_bytes()
        except OSError:
            return None

    result = format_grep(
        done.stdout,
        search_path=search_path,
        is_dir=os.path.isdir(search_path),
        limit=args.get("limit"),
        context=args.get("context"),
        rg_exit_code=done.returncode,
        rg_stderr=decode_utf8(done.stderr),
        read_file=read_file,
    )
    return result.text, result.is_error


def grep_args(rng: random.Random, texts: list[str]) -> dict:
    pick = rng.random()
    if pick < 0.6 and any(texts):
        source = rng.choice([t for t in texts if t])
        start = rng.randrange(len(source))
        pattern = source[start : start + rng.choice([1, 2, 4])].replace("\n", "").replace("\r", "") or "a"
    elif pick < 0.9:
        pattern = rng.choice(PATTERNS)
    else:
        pattern = random_text(rng, 3) or "z"
    # A NUL in argv makes Node's spawn throw before ripgrep runs (pi's text is Node's
    # "The argument 'args[5]' must be a string without null bytes. Received ..."); that is the
    # adapter's concern, so patterns here carry none.
    args: dict = {"pattern": pattern.replace("\x00", "") or "a"}
    for key, choices in [
        ("path", PATHS),
        ("glob", GLOBS),
        ("ignoreCase", [None, True, False]),
        ("literal", [None, None, True]),
        ("context", [None, None, 0, 1, 2, -1]),
        ("limit", [None, None, 1, 2, 5, 0, -3, 1000, 5000]),
    ]:
        value = rng.choice(choices)
        if value is not None:
            args[key] = value
    return args


N_TREE_FILES = 7
SEARCHES_PER_TREE = 12


@st.composite
def grep_tree(draw: st.DrawFn) -> tuple[list, int]:
    files = [draw(text_files(max_small_lines=8, allow_long=draw(st.integers(0, 3)) == 0)) for _ in range(N_TREE_FILES)]
    return files, draw(st.integers(0, 2**32 - 1))


@diff_settings(max_examples=30)
@given(tree=grep_tree())
def test_grep_matches_pi(pi_driver, tree):
    files, seed = tree
    rng = random.Random(seed)
    root = pi_driver.work_dir / f"grep-{seed}"
    root.mkdir(exist_ok=True)
    build_tree(root, [f.data for f in files])
    texts = [f.data.decode("utf-8", errors="replace") for f in files]
    searches = [grep_args(rng, texts) for _ in range(SEARCHES_PER_TREE)]
    responses = pi_driver.run([{"tool": "grep", "cwd": str(root), "args": args} for args in searches])
    for args, pi in zip(searches, responses):
        text, is_error = readbench_grep(root, args, pi_driver.env)
        where = f"args={args!r} over tree {[repr(f) for f in files]}"
        assert text == pi["text"], f"text differs for {where}:\n readbench={text[-600:]!r}\n pi       ={pi['text'][-600:]!r}"
        assert is_error == pi["isError"], f"isError differs for {where}"
        AGREED["grep"] += 1


def test_grep_caps_and_notices_match_pi(pi_driver, tmp_path):
    """Deterministic cases for each notice: match limit, 50KB cap, 500-char cut, astral cut,
    CRLF, context lines, single-file basename, no match, bad regex, missing path."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "big.txt").write_bytes(b"".join(b"match %d " % i + b"w" * 600 + b"\n" for i in range(300)))
    (tmp_path / "crlf.txt").write_bytes(b"one\r\ntwo match\r\nthree\r\n")
    (tmp_path / "astral.txt").write_bytes(("m" + "\U0001f600" * 300 + "\n").encode())
    (tmp_path / "sub" / "ctx.txt").write_bytes(b"l1\nl2\nmatch l3\nl4\r\nl5\rl6\nmatch l7\n")
    searches = [
        {"pattern": "match"},
        {"pattern": "match", "limit": 1000},
        {"pattern": "match", "path": "big.txt", "limit": 3},
        {"pattern": "two", "path": "crlf.txt"},
        {"pattern": "m", "path": "astral.txt"},
        {"pattern": "match", "path": "sub", "context": 2},
        {"pattern": "match", "path": "sub/ctx.txt", "context": 1},
        {"pattern": "nothing-here"},
        {"pattern": "("},
        {"pattern": "x", "path": "nope"},
        {"pattern": "MATCH", "ignoreCase": True, "limit": 2},
        {"pattern": "match 1", "literal": True, "glob": "*.txt", "limit": 4},
    ]
    responses = pi_driver.run([{"tool": "grep", "cwd": str(tmp_path), "args": args} for args in searches])
    for args, pi in zip(searches, responses):
        assert readbench_grep(tmp_path, args, pi_driver.env) == (pi["text"], pi["isError"]), f"args={args!r}"
        AGREED["grep"] += 1
