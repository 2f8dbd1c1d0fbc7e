"""Drop test runners' wall-clock durations from the bash tool's output (GitHub issue 29 item 1).

pytest ends every run with its summary and the session's wall time (``3 failed, 1200 passed in
10.55s``; ``in 75.12s (0:01:15)`` past a minute; between ``=`` separators without ``-q``), and
unittest prints ``Ran 12 tests in 0.004s``. The time depends on the machine's load, so the same
trajectory produced different tool results, hence different input tokens, in two runs (measured:
``1203 passed in 10.55s`` vs ``in 38.94s`` on the smoke matrix).
pytest has no option or environment variable that keeps the counts and omits the time
(``-qq`` drops the whole summary line; _pytest/terminal.py ``summary_stats``), and the tasks'
test commands are part of their prompts, so the command cannot change either.

So readbench's own bash tool (readbench.tools.bash, the harness readbench runs) removes exactly
that clause: `` in <seconds>s`` and pytest's optional `` (h:mm:ss)`` on such a summary line,
nothing else (counts, failures, tracebacks and any other text are kept byte for byte). The agent
loses only the duration. Real harnesses run through readbench.agents use their own tools and
are not changed. The checker reads its own, unmodified output (readbench.metrics.scorer).
"""

from __future__ import annotations

import re

__all__ = ["strip_test_durations"]

_STAT = rb"\d+ [a-z]+(?: [a-z]+)?"  # "3 passed", "1 warning", "2 subtests passed"
_PYTEST = re.compile(
    rb"^(?P<head>(?:=+ )?(?:no tests ran|" + _STAT + rb"(?:, " + _STAT + rb")*))"
    rb" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?P<tail> =+)?(?P<eol>\r?)$",
    re.MULTILINE,
)
_UNITTEST = re.compile(rb"^(?P<head>Ran \d+ tests?) in \d+(?:\.\d+)?s(?P<eol>\r?)$", re.MULTILINE)


def strip_test_durations(output: bytes) -> bytes:
    """``output`` with pytest's and unittest's run durations removed from their summary lines.

    Args:
        output: a command's combined stdout and stderr, as bytes.

    Returns:
        The same bytes but for each pytest summary line (``<n> <outcome>[, ...] in <s>s``,
        ``no tests ran in <s>s``, optionally between ``=`` separators, optionally followed by
        `` (h:mm:ss)``), which loses `` in <s>s[ (h:mm:ss)]``, and each unittest ``Ran <n> tests
        in <s>s`` line, which loses `` in <s>s``. E.g. ``b"1 failed, 2 passed in 0.12s\\n"`` ->
        ``b"1 failed, 2 passed\\n"``; ``b"=== 5 passed in 75.10s (0:01:15) ===="`` ->
        ``b"=== 5 passed ===="``.
    """
    output = _PYTEST.sub(rb"\g<head>\g<tail>\g<eol>", output)
    return _UNITTEST.sub(rb"\g<head>\g<eol>", output)
