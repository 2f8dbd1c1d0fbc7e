"""Each claimed local sample runs its commands on one CPU (readbench.sandbox.cpupin, issue 26 item 2):
the pool hands out the least-held allowed CPU, the sandbox prefixes ``taskset -c <cpu>``, the run
memo's key does not hold the CPU, and ``READBENCH_PIN_CPU=0`` turns it off."""

from __future__ import annotations

import os

import anyio
import pytest

from readbench.sandbox import cpupin, local
from readbench.sandbox.local import ReadbenchLocalSandbox

ALLOWED = sorted(os.sched_getaffinity(0))


@pytest.fixture
def pinning(monkeypatch):
    """Pinning on, whatever the environment says (the check is cached per process)."""
    monkeypatch.delenv(cpupin.ENV_SWITCH, raising=False)
    cpupin.pinning_works.cache_clear()
    yield
    cpupin.pinning_works.cache_clear()


def test_pin_prefix():
    assert cpupin.pin_prefix(3) == ("taskset", "-c", "3")
    assert cpupin.pin_prefix(None) == ()


def test_pool_spreads_samples_over_the_allowed_cpus_and_takes_them_back(pinning):
    if not cpupin.pinning_works():
        pytest.skip("taskset is missing or refused here")
    pool = cpupin.CpuPool()
    got = [pool.acquire() for _ in range(2 * len(ALLOWED))]
    assert got == ALLOWED + ALLOWED  # least held first, ties to the lowest number
    assert pool.held() == {c: 2 for c in ALLOWED}
    pool.release(got[0])
    assert pool.acquire() == ALLOWED[0]
    for c in got:
        pool.release(c)
    pool.release(None)
    assert pool.held() == {}


def test_switch_off_gives_no_cpu(monkeypatch):
    monkeypatch.setenv(cpupin.ENV_SWITCH, "0")
    cpupin.pinning_works.cache_clear()
    try:
        pool = cpupin.CpuPool()
        assert pool.acquire() is None and pool.held() == {}
    finally:
        cpupin.pinning_works.cache_clear()


def _allowed_in_sandbox(paths):
    """Each path claimed by its own sandbox at once; the CPUs a command in each may run on
    (``Cpus_allowed_list`` of /proc/self/status), and the pool after cleanup."""

    async def main():
        boxes = []
        for p in paths:
            sb = ReadbenchLocalSandbox()
            await sb.claim(p)
            boxes.append(sb)
        outs = []
        for sb in boxes:
            r = await sb.exec(["sh", "-c", "grep Cpus_allowed_list /proc/self/status"])
            assert r.success, r.stderr
            outs.append(r.stdout.split(":")[1].strip())
        for sb in boxes:
            sb.directory.cleanup()
        return outs, local.CPUS.held()

    return anyio.run(main)


def test_claimed_samples_run_on_one_cpu_each(tmp_path, pinning):
    if not cpupin.pinning_works():
        pytest.skip("taskset is missing or refused here")
    n = len(ALLOWED)
    outs, held_after = _allowed_in_sandbox([tmp_path / f"s{k}-e1" for k in range(n + 1)])
    assert outs == [str(c) for c in ALLOWED] + [str(ALLOWED[0])]
    assert held_after == {}


def test_unpinned_when_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv(cpupin.ENV_SWITCH, "0")
    cpupin.pinning_works.cache_clear()
    try:
        outs, _ = _allowed_in_sandbox([tmp_path / "a-e1"])
    finally:
        cpupin.pinning_works.cache_clear()
    with open("/proc/self/status") as fh:
        mine = next(line for line in fh if line.startswith("Cpus_allowed_list")).split(":")[1].strip()
    assert outs == [mine]


def test_memo_key_does_not_hold_the_cpu(tmp_path, pinning, monkeypatch):
    """Two samples on different CPUs running the same test command on the same tree: the second
    gets the first's stored result (one real run)."""
    if not cpupin.pinning_works() or len(ALLOWED) < 2:
        pytest.skip("needs taskset and two CPUs")
    from readbench.sandbox import runmemo

    monkeypatch.setattr(local, "RUN_MEMO", runmemo.RunMemo())
    monkeypatch.delenv(runmemo.ENV_SWITCH, raising=False)
    ran = []
    real_exec = local.LocalSandboxEnvironment.exec

    async def counting(self, cmd, *args, **kwargs):
        ran.append(list(cmd))
        return await real_exec(self, cmd, *args, **kwargs)

    monkeypatch.setattr(local.LocalSandboxEnvironment, "exec", counting)

    async def main():
        outs = []
        hold = ReadbenchLocalSandbox()  # holds the lowest CPU throughout
        await hold.claim(tmp_path / "hold-e1")
        extra = None
        for _ in range(2):
            sb = ReadbenchLocalSandbox()
            await sb.claim(tmp_path / "same-e1")
            r = await sb.exec(["sh", "-c", "echo pytest-run; true # pytest"])
            outs.append((sb.directory.cpu, r.stdout))
            sb.directory.cleanup()
            if extra is None:  # takes the CPU the first sample gave back: the second gets another
                extra = ReadbenchLocalSandbox()
                await extra.claim(tmp_path / "extra-e1")
        hold.directory.cleanup()
        extra.directory.cleanup()
        return outs

    outs = anyio.run(main)
    assert outs[0][1] == outs[1][1] == "pytest-run\n"
    assert outs[0][0] != outs[1][0]
    assert len(ran) == 1 and ran[0][:3] == ["taskset", "-c", str(outs[0][0])]
