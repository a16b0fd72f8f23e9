"""What the agents share, after stable-baselines3's ``common`` package: the Ray engine that
data-parallel groups and Ape-X learners drive their actors with (:mod:`.ray_engine`).

Nothing is imported here, so a config module can import a torch-free part without paying for
torch."""
