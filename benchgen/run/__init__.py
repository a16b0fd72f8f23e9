"""The run engine: planning a run, executing its units (here, in local processes or on Ray),
recording their episodes and saving their checkpoints. It writes what :mod:`benchgen.results`
reads; nothing in ``benchgen.results`` imports it."""
