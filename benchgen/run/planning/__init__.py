"""Planning a run, before anything is built or written: the user's input resolved and checked
(:mod:`.plan`), the resolved run that works out its budget, checkpoints, frames and steps once
(:mod:`.resolved`), the agent's settings and where each comes from (:mod:`.agent_settings`), and
the studies made of several runs, sweeps and re-evaluations (:mod:`.studies`). The planner's
budget and cost lines live beside this package, in :mod:`benchgen.run.budget` and
:mod:`benchgen.run.cost`."""
