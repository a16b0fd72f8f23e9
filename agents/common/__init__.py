"""What the agents share, after stable-baselines3's ``common`` package: checkpoint files
(:mod:`.checkpoint_io`), the ``device`` setting and torch's threads (:mod:`.torch_device`), the
optimizers the value-based agents' papers name (:mod:`.optimizers`) and the Ray engine that
data-parallel groups and Ape-X learners drive their actors with (:mod:`.ray_engine`).

Nothing is imported here, so a config module can import a torch-free part without paying for
torch."""
