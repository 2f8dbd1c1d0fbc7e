"""Forked arms (GitHub issue 25): one trunk per task x epoch x model, each arm branching at its
first divergent result, with the sandbox restored.

- `shadow`: where an arm would first differ from the trunk (its own read results and DCP
  projections computed in shadow) and the arm's `ForkPoint`;
- `trunk`: the trunk sample's bookkeeping driven by the agent loop (shadow, snapshots, prefixes);
- `snapshot`: an archive of the workspace's changes since setup, restored in a fork;
- `prefix`: what a fork starts from (the trunk's replies up to the fork point) and where it is kept;
- `solver`: the fork sample's setup (prefix found, workspace restored, store seeded).

The agent loop (readbench.agent.loop, readbench.agent._forking) plays either role; the run
stage (readbench.run.forked) runs the trunk eval, then one fork eval per arm.
Prior art and the coupling argument: docs/specs/agents.md §6.
"""
