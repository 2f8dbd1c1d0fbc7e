"""The `readbench` command: a thin click group over the library.

Each subpackage contributes its commands in a `_cli.py` module that defines `commands`, a
list of click commands or groups. Adding a command group is one line in `_COMMAND_MODULES`.
"""

from __future__ import annotations

import importlib

import click

# Modules that contribute commands (each defines `commands: list[click.Command]`).
_COMMAND_MODULES = [
    "readbench.read._cli",  # read, variants
    "readbench.harness._cli",  # agents
    "readbench.dcp._cli",  # dcp project|configs
    "readbench.cache._cli",  # cache simulate|models
    "readbench.corpus._cli",  # tasks build|list|check|stats
    "readbench.sim._cli",  # sim profiles|calibrate
    "readbench.run._cli",  # eval, plan
    "readbench.analysis._cli",  # report, compare, baseline
    "readbench.bench",  # bench
    "readbench.sandbox._cli",  # images, k8s-values
    "readbench.replay._cli",  # replay
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="readbench")
def main() -> None:
    """readbench: measure file-read strategies and context pruning for coding agents."""


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet: nothing to register
                continue
            raise
        for cmd in getattr(mod, "commands", []):
            main.add_command(cmd)


_register()

if __name__ == "__main__":
    main()
