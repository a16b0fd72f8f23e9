"""The run engine, in the order a run happens: :mod:`.planning` (the input resolved and checked,
nothing written), :mod:`.execution` (the units run, their episodes recorded, their checkpoints
saved) and :mod:`.evaluation` (evaluation rounds, the best policy's re-evaluation, videos);
:mod:`.lifecycle` takes every run through them. It writes what :mod:`benchgen.results` reads;
nothing in ``benchgen.results`` imports it."""
