"""The run stage: the `read_strategies` inspect task, its arguments, matrix files and
`readbench eval` (docs/architecture.md).

- `task`: the inspect Task of one arm (corpus samples, sandbox, setup solver, agent, scorer);
- `task_args`: one validation path for ``-T`` and a matrix's ``task_args``;
- `matrix`: matrix files (arms = read variant x DCP configuration x model);
- `settings`: how a run reaches and bounds its models (inspect's knobs, defaults for real models);
- `runner`: checking, locking and running a matrix through inspect's ``eval_set``;
- `calibrate`: the simulated agent's calibration runs (the task once per sim profile);
- `_cli`: the `readbench eval` and `readbench sim calibrate` commands.

Importing this package has no side effects.
"""
