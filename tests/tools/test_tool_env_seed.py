"""Tool commands run with a fixed PYTHONHASHSEED (issue 29): a Python set printed by a command
(a script, a test's failure message) lists its items in the same order in every run."""

from __future__ import annotations

import subprocess
import sys

from readbench.tools._env import isolated, workspace_env

SCRIPT = "print(sorted(range(3)), list({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'}))"


def test_workspace_env_fixes_the_hash_seed_and_the_task_can_override_it():
    assert workspace_env("/usr/bin:/bin\0/root", {}) == {
        "PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
    assert workspace_env("/bin\0/root", {"PYTHONHASHSEED": "7"})["PYTHONHASHSEED"] == "7"


def test_a_printed_set_has_the_same_order_in_every_run():
    env = workspace_env(f"/usr/bin:/bin\0{'/root'}", {})
    outs = {subprocess.run(isolated([sys.executable, "-c", SCRIPT], env), capture_output=True, text=True, check=True).stdout
            for _ in range(6)}
    assert len(outs) == 1, outs
