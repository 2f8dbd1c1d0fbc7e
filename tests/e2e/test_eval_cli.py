"""`readbench eval` refuses bad input with one clear line before anything runs or is written
(issue 13, defects 5 and 6): -T values go through the same checks as a matrix's task_args, and
models, the sandbox kind, corpus filters and the run id are checked before results/ is touched."""

from __future__ import annotations

import importlib.util
import re

import pytest
from click.testing import CliRunner
from corpus_fixture import write_corpus

from readbench.corpus import task_index
from readbench.run import task as rb_task
from readbench.run._cli import eval_cmd

MATRIX = """
name: t
models: [readbench/sim-diligent]
variants: [stock]
dcp: ["off"]
cache_models: [anthropic-5m]
"""


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("READBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("READBENCH_TASKS", str(write_corpus(tmp_path)))
    (tmp_path / "m.yaml").write_text(MATRIX)
    task_index.cache_clear()
    yield tmp_path
    task_index.cache_clear()


def _eval(*args):
    return CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])


@pytest.mark.parametrize("arg, message", [
    ("foo=1", "Invalid value for -T: unknown task argument(s) ['foo']; allowed: ['allow_local', "),
    ("limit=0", "Invalid value for -T: limit must be an integer from 1 to 100000 (tasks), got 0"),
    ("limit=abc", "Invalid value for -T: limit must be an integer from 1 to 100000 (tasks), got 'abc'"),
    ("limit=[1", "Invalid value for -T: 'limit=[1': the value is not valid YAML (expected ',' or ']'"),
    ("variant=B", "Invalid value for -T: variant is set per arm by the matrix's `variants` (or `arms`), "
                  "not as a task argument"),
    ("allow_local=maybe", "Invalid value for -T: allow_local must be true or false, got 'maybe'"),
    ("max_turns=100000000", "Invalid value for -T: max_turns must be an integer from 1 to 1000"),
    ("limit", "Invalid value for -T: 'limit' is not KEY=VALUE"),
    # issue 27 probe: an alias bomb in one -T value (9**6 expanded names) is refused by its size
    ("families=[&a [x,x,x,x,x,x,x,x,x], &b [" + ",".join(["*a"] * 9) + "], &c [" + ",".join(["*b"] * 9) + "], &d ["
     + ",".join(["*c"] * 9) + "], &e [" + ",".join(["*d"] * 9) + "], [" + ",".join(["*e"] * 9) + "]]",
     "Invalid value for -T: -T families: the YAML expands to more than 100000 values (nested aliases?)"),
])
def test_bad_task_arguments_are_usage_errors(workdir, arg, message):
    r = _eval("-T", arg)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not (workdir / "results").exists()


@pytest.mark.parametrize("args, env, message", [
    (["-T", "sources=nope"], {}, "Error: sources: ['nope'] not in the corpus; it has ['logs']"),
    (["-T", "families=nope"], {}, "Error: families: ['nope'] not in the corpus; it has ['bugfix', 'locate']"),
    (["--model", "readbench/sim-nope"], {}, "Error: model 'readbench/sim-nope' cannot be used: unknown sim profile "
                                            "'sim-nope' (known: sim-diligent,"),
    (["--model", "sim-diligent"], {}, "Error: model 'sim-diligent' is not an inspect model string like provider/name"),
    (["--sandbox", "docker"], {"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
     "Error: sandbox=docker but Docker is unusable: "),
])
def test_run_problems_are_one_line_before_the_run_directory_exists(workdir, monkeypatch, args, env, message):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    r = CliRunner().invoke(eval_cmd, ["--matrix", "m.yaml", "--sandbox", "local", *args])
    assert r.exit_code == 1, r.output
    assert r.output.startswith(message) and r.output.count("\n") == 1, r.output
    assert "[bold]" not in r.output and "Traceback" not in r.output
    assert not (workdir / "results").exists()


@pytest.mark.skipif(importlib.util.find_spec("mistralai") is not None, reason="the mistralai package is installed")
def test_a_real_model_without_its_provider_package_is_one_plain_line(workdir):
    # mistral: a provider readbench installs no package for (openai and anthropic have extras)
    r = _eval("--model", "mistral/mistral-large")
    assert r.exit_code == 1
    assert r.output == ("Error: model 'mistral/mistral-large' cannot be used: Mistral API requires optional "
                        "dependencies. Install with: pip install mistralai\n")
    assert not (workdir / "results").exists()


@pytest.mark.parametrize("run_id", ["../../x", "", "/tmp/abs", "a/b", ".hidden", "latest"])
def test_run_ids_outside_results_are_refused(workdir, run_id):
    r = _eval("--run-id", run_id)
    assert r.exit_code == 2
    assert f"Invalid value for --run-id: run id {run_id!r} must be one name of letters, digits" in r.output
    assert not (workdir / "results").exists() and not (workdir.parent / "x").exists()


@pytest.mark.parametrize("args, message", [
    ({"allow_local": "maybe"}, "allow_local must be true or false, got 'maybe'"),
    ({"limit": 0}, "limit must be an integer from 1 to 100000 (tasks), got 0"),
    ({"variant": 1}, "variant: read variant spec must be a preset name or a dict, got int"),
    ({"max_turns": 10**9}, "max_turns must be an integer from 1 to 1000 (model calls per sample)"),
])
def test_inspect_eval_task_arguments_get_the_same_checks(workdir, args, message):
    # `inspect eval evals/read_strategies.py -T ...` builds the task through read_strategies_task
    with pytest.raises(ValueError, match=re.escape(message)):
        rb_task.read_strategies_task(sandbox_kind="local", **args)


def test_an_unwritable_results_directory_is_one_line(workdir):
    """brk13: `results` that cannot hold the run directory (here a file; a read-only directory for a
    non-root user) was a PermissionError/NotADirectoryError traceback from the run lock."""
    (workdir / "results").write_text("")
    r = _eval("--run-id", "ro")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[-1] == (
        "Error: cannot write the run directory results/ro: Not a directory; run from a directory where "
        "results/ is writable, or fix its permissions")
    assert r.exception is None or isinstance(r.exception, SystemExit)


@pytest.mark.parametrize("with_report", [False, True])
def test_an_interrupted_run_exits_1_as_documented(workdir, monkeypatch, with_report):
    """brk13: Ctrl-C gave exit 130 when readbench saw the KeyboardInterrupt and 1 when inspect
    absorbed it (its cancelled logs), while --help and the README say "Exits 1"."""
    from readbench.run import runner

    monkeypatch.setattr(runner, "run_plan", lambda plan, run_dir: (False, True))
    if with_report:
        monkeypatch.setattr("readbench.run._cli.build_report", lambda run_dir: run_dir / "report" / "report.md")
    r = _eval("--run-id", "intr")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[-1] == (
        "incomplete: eval_set did not complete every task; re-run the same command to resume" if with_report
        else "incomplete: no sample finished; re-run the same command to resume")
