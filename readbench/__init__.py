"""readbench: which file-read strategy and which context-pruning (DCP) configuration should a
coding agent ship? A benchmark harness on inspect-ai.

Subpackages (one concern each; the layers and the data flow: docs/architecture.md):
base/ the bottom layer (JS text semantics, pi's truncation, the per-sample store contract),
records.py the registry helper, harness/ agent-harness records, read/ variants, tools/ inspect
tools, dcp/ projection, cache/ tokenizer + provider cache simulator + prices, agent/ the loop,
sim/ the embedded behaviour-model provider, corpus/ tasks and grading, metrics/ per-sample
metrics + scorer, run/ the inspect task, matrix files and `readbench eval`, analysis/ tables +
statistics + report, sessions/ importers for recorded sessions (pi, Claude Code, Codex, inspect
logs), replay/ their replays against the bill and under DCP, cli.py the `readbench` command,
_registry.py inspect's entry point.

Importing this package has no side effects.
"""

__version__ = "0.1.0"
