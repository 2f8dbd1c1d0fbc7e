"""The inspect `bash` tool with pi 0.84.1 semantics (docs/specs/pi-tools.md §3.1).

stdout and stderr are merged in arrival order (``exec 2>&1`` before the command), the output
is tail-truncated to 2000 lines / 50 KB by readbench.tools.pi.bash, and a truncated run's
full output is written to ``<tmp>/pi-bash-<16 hex>.log`` inside the sandbox, as pi does (pi:
``os.tmpdir()``; here the command's ``TMPDIR``: the local sandbox's private directory of the
sample, removed with it, readbench.sandbox.local.sample_tmpdir; ``/tmp`` in a container). The
command sees only the allow-listed environment (readbench.tools._env), never the host's.

One deliberate difference from pi: test runners' wall-clock durations (pytest's ``... passed in
10.55s``, unittest's ``Ran N tests in 0.004s``) are removed from the output before it is
formatted (readbench.tools.durations, GitHub issue 29), so the same trajectory gives the same
tool results, hence tokens, on an idle and a loaded machine.
"""

from __future__ import annotations

import hashlib
import math

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import sandbox

from readbench.base import store as rbstore
from readbench.tools._env import isolated
from readbench.tools.durations import strip_test_durations
from readbench.tools.pi.bash import format_bash_output, validate_bash_timeout

#: pi has no default timeout; a harness still needs one so a looping test cannot hang a
#: sample forever (corpus.md §3.1: 6 of 280 mutants looped). Seconds.
HARNESS_TIMEOUT_SECONDS = 300
#: Node delivers a child's output in 64 KiB chunks; pi's rolling tail depends on them
CHUNK_BYTES = 65_536

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. "
    "Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, "
    "full output is saved to a temp file. Optionally provide a timeout in seconds."
)
PARAMS = {
    "command": "Bash command to execute",
    "timeout": "Timeout in seconds (optional, no default timeout)",
}


def bash_tool() -> Tool:
    """Build pi's `bash` tool (description and parameters verbatim from pi-tools.md §2.1/§3.1)."""

    async def execute(command: str, timeout: float | None = None) -> str:
        call_id = rbstore.claim_call_id("bash", {"command": command, "timeout": timeout})
        invalid = validate_bash_timeout(timeout)
        if invalid is not None:
            raise ToolError(invalid)
        ws = rbstore.workspace()
        limit = HARNESS_TIMEOUT_SECONDS if timeout is None else min(timeout, HARNESS_TIMEOUT_SECONDS)
        tag = hashlib.sha256(f"{call_id}:{command}".encode()).hexdigest()[:16]
        full_path = f"{ws['env'].get('TMPDIR', '/tmp')}/pi-bash-{tag}.log"
        # `timeout` inside the sandbox keeps the partial output pi shows on a timeout; inspect's
        # own exec timeout is only a backstop (it would discard the output).
        res = await sandbox().exec(
            isolated(["timeout", "-k", "5", f"{limit:g}", "bash", "-c", "exec 2>&1\n" + command], ws["env"]),
            timeout=math.ceil(limit) + 30,
        )
        output = strip_test_durations((res.stdout + res.stderr).encode())
        timed_out = res.returncode in (124, 137)  # timeout(1): TERM sent / KILL after 5 s grace
        code = None if timed_out else res.returncode
        chunks = [output[i:i + CHUNK_BYTES] for i in range(0, len(output), CHUNK_BYTES)] or [b""]
        result = format_bash_output(
            chunks, code, timed_out=timed_out, timeout_seconds=limit, full_output_path=full_path
        )
        truncated = bool(result.truncation.truncated)
        if truncated:
            await sandbox().write_file(full_path, output)
        rbstore.set_details(call_id, {"command": command, "exit_code": code, "timed_out": timed_out,
                                      "output_bytes": len(output), "truncated": truncated})
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    return ToolDef(execute, name="bash", description=DESCRIPTION, parameters=PARAMS, max_output=0).as_tool()
