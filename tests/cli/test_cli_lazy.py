"""`readbench --help` imports no command module; `readbench CMD` imports CMD's (readbench/cli.py:
click's lazy loading of subcommands), and every help text is the one the eagerly loaded commands
print."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import click
import pytest

from readbench.cli import _COMMANDS, _EXTENDS, LazyGroup, main

# prints the readbench and library modules a `readbench ARGS` run imported (beyond readbench.cli)
PROBE = """
import sys
from readbench.cli import main
try:
    main(sys.argv[1:], prog_name="readbench")
except SystemExit:
    pass
heavy = ("inspect_ai", "pandas", "scipy", "matplotlib", "numpy")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy and "." not in m
                or m.startswith("readbench.") and m != "readbench.cli")
print("loaded:", " ".join(loaded), file=sys.stderr)
"""


def _probe(*args: str) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    return done.stdout, done.stderr.strip().splitlines()[-1]


def test_top_level_help_imports_no_command_module() -> None:
    out, loaded = _probe("--help")
    assert loaded == "loaded:"
    assert "  agents      List the agents a matrix's `agents:` may name: readbench's...\n" in out
    assert out.endswith("  variants    List the read-variant presets with their parameters and...\n")


def test_a_command_imports_its_own_module_only() -> None:
    out, loaded = _probe("sim", "--help")
    # `sim calibrate` is defined by readbench.run._cli (_EXTENDS), which imports analysis.report_cli
    assert loaded == ("loaded: readbench.analysis readbench.analysis.report_cli readbench.run readbench.run._cli "
                      "readbench.sim readbench.sim._cli readbench.sim.profiles")
    assert "  calibrate  Run the corpus once per profile under one read variant and...\n" in out


def test_an_unknown_command_names_the_close_ones() -> None:
    """As when every command was imported: "Did you mean" offers commands not imported yet."""
    done = subprocess.run([sys.executable, "-m", "readbench.cli", "rep"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("Error: No such command 'rep'. (Did you mean one of: 'replay', 'report'?)\n")


def test_no_command_s_help_imports_inspect_pandas_or_scipy() -> None:
    """`readbench CMD --help` for every command and group: a command's module imports its library
    in the command's body (the 4.8 s of `readbench --help` were inspect_ai 2.3 s, scipy, pandas,
    matplotlib)."""
    heavy = {}
    for name in sorted(_COMMANDS):
        out, loaded = _probe(name, "--help")
        assert out.startswith(f"Usage: readbench {name} [OPTIONS]")
        heavy[name] = [m for m in loaded.split()[1:] if not m.startswith("readbench.")]
    assert heavy == {name: [] for name in _COMMANDS}


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_each_entry_names_its_command_and_summary(name: str) -> None:
    module, attribute, summary = _COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command) and command.name == name
    assert summary == command.get_short_help_str(10**6)


@pytest.mark.parametrize("width", [30, 60, 80, 120])
def test_help_equals_the_eager_groups(width: int) -> None:
    """The lazy group's help, at any terminal width, is the help of a plain click group holding
    every command."""
    loaded = {}
    for name, (module, attribute, _) in _COMMANDS.items():
        loaded[name] = getattr(importlib.import_module(module), attribute)
        for extension in _EXTENDS.get(name, ()):
            importlib.import_module(extension)
    lazy = LazyGroup("readbench", params=main.params, help=main.help, context_settings=main.context_settings)
    eager = click.Group("readbench", params=main.params, help=main.help, context_settings=main.context_settings,
                        commands=loaded)
    texts = [g.get_help(click.Context(g, info_name="readbench", terminal_width=width)) for g in (lazy, eager)]
    assert texts[0] == texts[1]
    assert not lazy.commands  # listing imported nothing into the group
