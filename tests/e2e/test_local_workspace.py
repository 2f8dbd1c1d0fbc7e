"""The local sandbox's workspace path is the same in every run (issue 29 item 1): inspect's
`local` sandbox used a fresh random temp dir, whose name is in pi's system prompt, so two runs of
the same inputs differed in input tokens. readbench.sandbox.local fixes it per sample and epoch."""

from __future__ import annotations

import os

import anyio
import pytest
from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai.log import read_eval_log

from readbench.run import task as rb_task
from readbench.sandbox.local import ReadbenchLocalSandbox, workspace_name

tiny_corpus = tiny_corpus_fixture(own_cache=True, own_workspaces=True)


def _messages(tmp_path, log_dir, variant):
    task = rb_task.read_strategies_task(sandbox_kind="local", variant=variant, dcp="off")
    [log] = eval_ok(task, "readbench/sim-diligent", tmp_path / log_dir)
    return {s.id: [(m.role, m.text) for m in s.messages] for s in read_eval_log(log.location).samples}


def test_two_runs_and_two_arms_see_the_same_workspace_path(tiny_corpus):
    ws = tiny_corpus / "ws"
    first = _messages(tiny_corpus, "a", "stock")
    assert sorted(first) == ["logs/bugfix/0", "logs/locate/0"]
    for sample_id, messages in first.items():
        system = messages[0][1]
        assert system.endswith(f"\nCurrent working directory: {ws / workspace_name(sample_id, 1)}"), system[-200:]
    assert first == _messages(tiny_corpus, "b", "stock")  # every message, byte for byte
    other_arm = _messages(tiny_corpus, "c", "B")
    assert {k: v[0][1].splitlines()[-1] for k, v in other_arm.items()} == {k: v[0][1].splitlines()[-1] for k, v in first.items()}
    assert sorted(os.listdir(ws)) == ["logs-bugfix-0-e1.lock", "logs-locate-0-e1.lock"]  # trees removed at cleanup


def test_workspace_name_is_a_safe_slug():
    assert workspace_name("tomlkit/longsession/0", 1) == "tomlkit-longsession-0-e1"
    assert workspace_name("a b//c", 12) == "a-b-c-e12"
    with pytest.raises(ValueError, match="sample id '//'"):
        workspace_name("//", 1)
    with pytest.raises(ValueError, match="epoch 0"):
        workspace_name("x", 0)


def test_two_samples_wanting_one_directory_take_turns(tmp_path):
    """The second claim of a directory waits until the first sample's cleanup; leftovers of a
    killed run are removed on claim."""
    path = tmp_path / "ws" / "s-e1"
    path.mkdir(parents=True)
    (path / "leftover").write_text("x")
    order = []

    async def main():
        first, second = ReadbenchLocalSandbox(), ReadbenchLocalSandbox()
        await first.claim(path)
        assert not (path / "leftover").exists() and first.directory.name == str(path)
        await first.write_file("f.txt", "one")

        async def late():
            await second.claim(path)
            order.append(("second claimed", sorted(os.listdir(path))))

        async with anyio.create_task_group() as tg:
            tg.start_soon(late)
            await anyio.sleep(1.2)
            order.append(("first cleans up", sorted(os.listdir(path))))
            first.directory.cleanup()
        assert (await second.exec(["pwd"])).stdout.strip() == str(path)
        second.directory.cleanup()
        with pytest.raises(RuntimeError, match="already works in"):
            await second.claim(path)

    anyio.run(main)
    assert order == [("first cleans up", ["f.txt"]), ("second claimed", [])]
    assert not path.exists()
