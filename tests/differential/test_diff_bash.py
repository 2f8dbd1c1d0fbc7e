"""Differential: readbench.tools.pi.bash vs pi 0.84.1's shipped bash tool (issue 9).

Generated outputs are fed, in generated chunks, through pi's real `execute` with a fake exec
operation (so chunking is deterministic: it matters for UTF-8 sequences split across chunks and
for pi's rolling tail above 204,800 bytes); the result text and error flag are compared with
`format_bash_output(chunks, ...)`, given pi's random full-output path. A few real commands run
through pi's own local shell as an end-to-end check.
"""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pi_diff_gen import AGREED, FileSpec, diff_settings, text_files

from readbench.tools.pi.bash import format_bash_output, validate_bash_timeout

pytestmark = pytest.mark.differential

BATCH = 25


@st.composite
def bash_case(draw: st.DrawFn) -> dict:
    parts = draw(st.lists(text_files(), min_size=1, max_size=draw(st.sampled_from([1, 1, 1, 4]))))
    data = b"".join(p.data for p in parts)
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    chunking = rng.choice(["one", "pipe", "random", "bytes"])
    if chunking == "one" or not data:
        chunks = [data] if data else []
    elif chunking == "pipe":
        chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    elif chunking == "bytes" and len(data) < 5000:
        chunks = [data[i : i + 1] for i in range(len(data))]
    else:
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 12)))) if len(data) > 1 else []
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    outcome = rng.choice(["exit"] * 8 + ["timeout", "abort"])
    timeout = rng.choice([None, None, 1, 2.5, 0.00001, 1e-7, 30, 120.25]) if outcome != "timeout" else rng.choice([1, 2.5, 0.00001, 1e-7, 30])
    return {
        "spec": FileSpec(data, " + ".join(p.recipe for p in parts) + f", {len(chunks)} chunks ({chunking})"),
        "chunks": chunks,
        "exit_code": rng.choice([0, 0, 0, 1, 2, 127, None]),
        "outcome": outcome,
        "timeout": timeout,
    }


def pi_request(case: dict, cwd: Path) -> dict:
    import base64

    args: dict = {"command": "generated"}
    if case["timeout"] is not None:
        args["timeout"] = case["timeout"]
    return {
        "tool": "bash",
        "cwd": str(cwd),
        "args": args,
        "bash": {
            "chunks": [base64.b64encode(c).decode() for c in case["chunks"]],
            "exitCode": case["exit_code"],
            "outcome": case["outcome"],
        },
    }


_FULL_OUTPUT = re.compile(r"Full output: (/\S*pi-bash-[0-9a-f]{16}\.log)\]")


def full_output_path(pi: dict) -> str:
    """pi's random temp-file path: from details, or (errors carry no details) from the notice."""
    if pi["fullOutputPath"]:
        return pi["fullOutputPath"]
    found = _FULL_OUTPUT.search(pi["text"] or "")
    return found.group(1) if found else ""


def readbench_bash(case: dict, full_output_path: str) -> tuple[str, bool]:
    result = format_bash_output(
        case["chunks"],
        case["exit_code"],
        timed_out=case["outcome"] == "timeout",
        timeout_seconds=case["timeout"],
        aborted=case["outcome"] == "abort",
        full_output_path=full_output_path,
    )
    return result.text, result.is_error


@diff_settings(max_examples=40)
@given(cases=st.lists(bash_case(), min_size=BATCH, max_size=BATCH))
def test_bash_output_matches_pi(pi_driver, cases):
    responses = pi_driver.run([pi_request(case, pi_driver.work_dir) for case in cases])
    for case, pi in zip(cases, responses):
        text, is_error = readbench_bash(case, full_output_path(pi))
        where = (
            f"output {case['spec']!r}, exit_code={case['exit_code']!r}, outcome={case['outcome']!r}, "
            f"timeout={case['timeout']!r}"
        )
        assert text == pi["text"], f"text differs for {where}:\n readbench={text[-500:]!r}\n pi       ={pi['text'][-500:]!r}"
        assert is_error == pi["isError"], f"isError differs for {where}"
        AGREED["bash"] += 1


BOUNDARY_OUTPUTS = [
    b"",
    b"out\nerr\n",
    b"x" * 51_200,
    b"x" * 51_201,
    b"x" * 51_200 + b"\n",
    b"x" * 60_000 + b"\n",
    b"x" * 60_000,
    b"a\n" + b"x" * 60_000,
    b"".join(b"%d\n" % i for i in range(2000)),
    b"".join(b"%d\n" % i for i in range(2001)),
    b"".join(b"%d\n" % i for i in range(2001)) + b"tail",
    b"y\n" * 150_000,
    b"z" * 250_000 + b"\nlast\n",
    b"\xef\xbb\xbfbom\n",
    "\u00e9".encode() * 30_000,
]


@pytest.mark.parametrize("exit_code", [0, 2, None])
def test_boundary_outputs_match_pi(pi_driver, tmp_path, exit_code):
    cases = [
        {"spec": FileSpec(o, "boundary"), "chunks": [o] if o else [], "exit_code": exit_code, "outcome": "exit", "timeout": None}
        for o in BOUNDARY_OUTPUTS
    ]
    responses = pi_driver.run([pi_request(case, tmp_path) for case in cases])
    for case, pi in zip(cases, responses):
        assert readbench_bash(case, full_output_path(pi)) == (pi["text"], pi["isError"]), repr(case["spec"])
        AGREED["bash"] += 1


@pytest.mark.parametrize("timeout", [0, -1, 2147483.648, 1e10, 0.5, 2147483.647])
def test_timeout_validation_matches_pi(pi_driver, tmp_path, timeout):
    """pi's real local exec validates `timeout` before spawning (pi-tools.md §3.1)."""
    [pi] = pi_driver.run([{"tool": "bash", "cwd": str(tmp_path), "args": {"command": "true", "timeout": timeout}}])
    expected = validate_bash_timeout(timeout)
    if expected is None:
        assert (pi["text"], pi["isError"]) == ("(no output)", False)
    else:
        assert (pi["text"], pi["isError"]) == (expected, True)
    AGREED["bash"] += 1


REAL_COMMANDS = [
    ("printf 'a\\nb'", None),
    ("true", None),
    ("exit 3", None),
    ("echo out; echo err >&2; exit 2", None),
    ("seq 1 2500", None),
    ("head -c 60000 /dev/zero | tr '\\0' x", None),
    ("yes | head -c 300000", None),
    ("printf '\\xff\\xfe'; printf 'caf\\xc3\\xa9\\n'", None),
    ("echo hi; sleep 5", 0.5),
]


@pytest.mark.parametrize(("command", "timeout"), REAL_COMMANDS)
def test_real_commands_match_pi(pi_driver, tmp_path, command, timeout):
    """End to end: pi runs the command in its own shell; we run it with bash and format it."""
    args: dict = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout
    [pi] = pi_driver.run([{"tool": "bash", "cwd": str(tmp_path), "args": args}])
    try:
        done = subprocess.run(["/bin/bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=timeout)
        output, exit_code, timed_out = done.stdout + done.stderr, done.returncode, False
    except subprocess.TimeoutExpired as expired:
        output, exit_code, timed_out = (expired.stdout or b"") + (expired.stderr or b""), None, True
    result = format_bash_output(
        output, exit_code, timed_out=timed_out, timeout_seconds=timeout, full_output_path=full_output_path(pi)
    )
    assert (result.text, result.is_error) == (pi["text"], pi["isError"]), f"command {command!r}"
    AGREED["bash"] += 1
