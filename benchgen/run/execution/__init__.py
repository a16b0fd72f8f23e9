"""Executing a planned run's units: the executors (:mod:`.execute` chooses between this process,
local processes, :mod:`.local`, and Ray, :mod:`.ray_cluster`), what they share (:mod:`.schedule`,
:mod:`.signals`, :mod:`.progress`), and one unit read top to bottom (:mod:`.unit`): its parts built
(:mod:`.build`), its episodes recorded (:mod:`.recorder`), its checkpoints saved
(:mod:`.checkpoints`)."""
