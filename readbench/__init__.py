"""readbench: which file-read strategy and which context-pruning (DCP) configuration should a
coding agent ship? A benchmark harness on inspect-ai.

Subpackages (one concern each, see ../shared/ARCHITECTURE.md):
read/ variants, tools/ inspect tools, dcp/ projection, cache/ tokenizer + provider cache
simulator + prices, agent/ the loop, sim/ the embedded behaviour-model provider,
corpus/ tasks, metrics/ per-sample metrics + scorers, analysis/ tables + statistics + report,
sessions/ importers for recorded sessions (pi, Claude Code, Codex, inspect logs), replay/ their
replays against the bill and under DCP, cli.py the `readbench` command.

Importing this package has no side effects.
"""

__version__ = "0.1.0"
