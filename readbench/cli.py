"""The `readbench` command: a thin click group over the library.

Each subpackage defines its commands in a `_cli.py` module (`readbench plan`: run/plan_cli.py;
`readbench report|compare|baseline`: analysis/report_cli.py and baseline_cli.py; `readbench bench`:
bench.py). `_COMMANDS` names, for each command, the module and attribute that define it and its
summary (the line `readbench --help` shows). A command's module is imported only when that command
is looked up (to run it or to print its own help), never to list the commands: click's lazy
loading of subcommands ("Lazily Loading Subcommands" in click's documentation: a group whose
`get_command` imports, and a summary known without the import). The command modules pull in
inspect_ai, pandas, scipy and matplotlib: importing them all took ~4.8 s before `readbench --help`
printed anything. Adding a command is one entry in `_COMMANDS`; tests/cli/test_cli_lazy.py checks
each entry against the command it names.
"""

from __future__ import annotations

import atexit
import gc
import importlib
from gettext import gettext

import click

# name -> (module, attribute, summary). The summary is the first sentence of the command's help,
# as click shortens it (`Command.get_short_help_str`): click shortens it again to the width of
# the terminal exactly as it does the command's own help.
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "agents": ("readbench.harness._cli", "agents_cmd",
               "List the agents a matrix's `agents:` may name: readbench's loop and each real harness at its "
               "pinned npm version (integrity from the committed lock file)."),
    "baseline": ("readbench.analysis.baseline_cli", "baseline",
                 "Make RUN_DIR (default: the newest complete run of the matrix) the baseline: its table, "
                 "run.json and report, no logs."),
    "bench": ("readbench.bench", "bench_cmd",
              "Measure harness overhead per model call, Docker start/stop per sample, recorded-session import "
              "and replay (and its scale: replay --dcp all x 5 cache models, with and without --audit "
              "--gate-sweep), a 100 MB read per variant, and the nightly matrix forked vs independent on one "
              "task per family (results/bench/)."),
    "cache": ("readbench.cache._cli", "cache_group",
              "Provider prompt-cache simulator and dated prices (docs/specs/caching.md)."),
    "compare": ("readbench.analysis.baseline_cli", "compare",
                "Compare RUN_DIR with the baseline: every arm x headline metric (success, cost per cache "
                "model, turns, input tokens, read calls), paired on (task, epoch), CR2 t tests, Holm."),
    "dcp": ("readbench.dcp._cli", "dcp_group",
            "Context pruning (DCP): project a history through a configuration."),
    "doctor": ("readbench.sandbox._cli", "doctor_cmd",
               "Can the docker sandbox run here? Engine and Compose versions, and the offline base image."),
    "eval": ("readbench.run._cli", "eval_cmd",
             "Run a matrix of arms through inspect's eval_set, then write the table and the report."),
    "images": ("readbench.sandbox._cli", "images_cmd",
               "Build the per-source task images (content-addressed; unchanged sources are not rebuilt)."),
    "k8s-values": ("readbench.sandbox._cli", "k8s_values_cmd",
                   'Helm values (inspect-k8s-sandbox chart agent-env) for one source: sandbox=("k8s", FILE).'),
    "plan": ("readbench.run.plan_cli", "plan",
             "Tasks x epochs needed to detect EFFECT (and COST-RATIO), from --from's own variances; with "
             "--design forked, what the matrix costs forked and independent."),
    "read": ("readbench.read._cli", "read_cmd",
             "Print what the model would receive from `read PATH` under a read variant."),
    "replay": ("readbench.replay._cli", "replay_cmd",
               "Import recorded sessions (files or directories, any mix of pi, Claude Code, Codex and inspect "
               "logs: the format is read from each file's content) and check the cache simulator against what "
               "the provider billed, call by call: raw, calibrated in-sample, and out-of-sample (fitted on the "
               "first half of each session, scored on the second)."),
    "report": ("readbench.analysis.report_cli", "report",
               "Rebuild RUN_DIR/table.parquet and RUN_DIR/report/ from RUN_DIR/logs alone."),
    "sim": ("readbench.sim._cli", "sim_group",
            "The embedded simulated agent (model ``readbench/<profile>``)."),
    "tasks": ("readbench.corpus._cli", "tasks_group",
              "Build, list, self-check and count the task corpus (tasks/sources.toml)."),
    "variants": ("readbench.read._cli", "variants_cmd",
                 "List the read-variant presets with their parameters and origin."),
}

# Modules that add subcommands to a command group of another module, imported with the group:
# run/_cli.py defines `readbench sim calibrate` (it runs the corpus; readbench.sim may not import
# readbench.run, tests/architecture/test_import_cycles.py).
_EXTENDS: dict[str, tuple[str, ...]] = {"sim": ("readbench.run._cli",)}

# click >= 8.4 raises it for an unknown command, with the close names of the group's commands
_NO_SUCH_COMMAND = getattr(click, "NoSuchCommand", None)


class LazyGroup(click.Group):
    """A click group whose subcommands (`_COMMANDS`) are imported when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module, attribute, _ = _COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            for extension in _EXTENDS.get(cmd_name, ()):
                importlib.import_module(extension)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, but an unknown command's "Did you mean ...?" draws on every command, not only on
        those imported (click takes them from `self.commands`)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if _NO_SUCH_COMMAND is None or not isinstance(exc, _NO_SUCH_COMMAND):
                raise
            raise _NO_SUCH_COMMAND(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of `readbench --help` from the summaries in `_COMMANDS`, imports
        nothing; the rows are click's own (`click.Group.format_commands`)."""
        rows = [(name, self.commands[name] if name in self.commands else click.Command(name, help=_COMMANDS[name][2]))
                for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in rows if not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section(gettext("Commands")):  # as click does
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="readbench")
def main() -> None:
    """readbench: measure file-read strategies and context pruning for coding agents."""


def _no_collection_at_exit() -> None:
    """Move every object to the garbage collector's permanent generation (``gc.freeze``) as the
    process exits: the interpreter's finalisation then skips its full collections over the heap
    that inspect, pandas and pydantic leave behind. Measured on a `readbench eval` run (2-core machine,
    load 4-5): 2.7-2.8 s from the last line printed to the exit without it, 0.15-0.24 s with it,
    ~2 CPU s less per process (the test suite starts ~30 `readbench` processes). Registered before
    any command module is imported, so it runs after their atexit handlers (atexit is last in,
    first out); finalisation still clears the modules, and objects freed by reference count are
    freed as before. Only garbage in reference cycles is no longer collected at exit, where
    CPython never promised to finalise it."""
    gc.freeze()


atexit.register(_no_collection_at_exit)

if __name__ == "__main__":
    main()
