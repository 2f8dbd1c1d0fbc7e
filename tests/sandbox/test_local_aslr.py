"""Commands in the local sandbox run with address-space randomisation off (readbench.sandbox.local
.no_aslr_prefix, issue 29): Python prints objects with their address (a failing click test's
report: ``<click.testing.CliRunner object at 0x7f446599a590>``), different in every run under
ASLR, so the same trajectory got different tool results, hence tokens."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from readbench.sandbox import local
from readbench.sandbox.local import ReadbenchLocalSandbox


def _addresses(path):
    """Two commands in a claimed sandbox printing a new object (its address) and a function's."""

    async def main():
        sb = ReadbenchLocalSandbox()
        await sb.claim(path)
        script = "class A: pass\nprint(A(), object(), A.__init__)"
        outs = [(await sb.exec(["python3", "-c", script])).stdout for _ in range(2)]
        sb.directory.cleanup()
        return outs

    return anyio.run(main)


def test_object_addresses_in_command_output_are_the_same_in_every_run(tmp_path):
    """Address-space randomisation off (setarch -R): Python's reprs with `at 0x...` (a failing
    test's report) are the same in every run of the same command (issue 29)."""
    if not local.no_aslr_prefix():
        pytest.skip("setarch -R is not available or not permitted here")
    first, second = _addresses(tmp_path / "ws" / "a-e1")
    assert first == second and " object at 0x" in first
    assert _addresses(tmp_path / "ws" / "b-e1") == [first, first]


def test_commands_run_without_setarch_where_it_is_missing(tmp_path, monkeypatch):
    if Path("/proc/sys/kernel/randomize_va_space").read_text().strip() == "0":
        pytest.skip("address-space randomisation is off on this machine")
    monkeypatch.setattr(local, "no_aslr_prefix", lambda: ())
    first, second = _addresses(tmp_path / "ws" / "a-e1")
    assert " object at 0x" in first and first != second  # randomised: the kernel's default
