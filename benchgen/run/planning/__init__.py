"""Planning a run, before anything is built or written: the user's input resolved and checked
(:mod:`.plan`), the resolved run that works out its budget, checkpoints, frames and steps once
(:mod:`.resolved`), the agent's settings and where each comes from (:mod:`.agent_settings`), and
the studies made of several runs, sweeps and re-evaluations (:mod:`.studies`), and the plan's
budget lines (:mod:`.budget`: the sub-environments stepped at once, a budget below one learning
round) and its wall-time estimate from the suites' measured speeds (:mod:`.cost`)."""
