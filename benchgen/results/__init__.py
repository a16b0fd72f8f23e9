"""What a run leaves behind and how it is read: the run directory and its results store, the
one-run report, the episode export and the comparison of runs."""
