"""The bottom layer: facts and helpers that several readbench packages share, kept once.

- `js`: JavaScript/Node text, number, JSON and path semantics (pi's tools, the read variants,
  the DCP strategies);
- `truncate`: pi's output truncation (`truncate.js`: head, tail, line);
- `store`: the per-sample store contract: the keys the setup solver, the agent loop and the
  tools write, and the per-call record (`CallLog`) the metrics and the scorer read.

Modules here import nothing from readbench outside this package (docs/architecture.md);
importing it has no side effects.
"""
