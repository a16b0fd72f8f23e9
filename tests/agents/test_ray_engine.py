"""The Ray engine the data-parallel groups and Ape-X share (``benchgen_agents.common.ray_engine``),
driven here through a stand-in for Ray that runs every actor in this process: the CPU check, a
start whose actors are not all ready in time, and a constructor's error reaching the driver. The
Ray-backed tests (``test_data_parallel_*``, ``rainbow_iqn/test_apex.py``) run it on a real Ray."""

from __future__ import annotations

import pytest

from benchgen.errors import UsageError
from benchgen_agents.common.ray_engine import ActorDriver, RemoteActor, seed_from


class _TaskError(Exception):
    """Ray's ``RayTaskError``: an actor method's exception, kept as ``cause``."""

    def __init__(self, cause: Exception):
        super().__init__(str(cause))
        self.cause = cause


class _Ref:
    def __init__(self, call, late: bool):
        self.late = late
        self.value = self.error = None
        try:
            self.value = call()
        except Exception as exc:
            self.error = _TaskError(exc)


class _Handle:
    """An actor handle: ``handle.method.remote(*args)`` calls the method at once."""

    def __init__(self, instance, late: bool):
        self.instance, self.late = instance, late

    def __getattr__(self, name):
        method = getattr(self.instance, name)
        late = self.late and name == "ready"
        return type("_Method", (), {"remote": staticmethod(lambda *a: _Ref(lambda: method(*a), late))})()


class _Ray:
    """What the engine asks of Ray; the actors started ``late`` (by their order) never get ready."""

    exceptions = type("exceptions", (), {"RayTaskError": _TaskError})

    def __init__(self, cpus: float, late: tuple[int, ...] = ()):
        self.cpus, self.late = cpus, set(late)
        self.started: list[_Handle] = []
        self.killed: list[_Handle] = []
        self.options: dict = {}

    def cluster_resources(self):
        return {"CPU": self.cpus}

    def remote(self, cls):
        ray = self

        class _Remote:
            def options(self, **options):
                ray.options = options
                return self

            def remote(self, *args):
                handle = _Handle(cls(*args), late=len(ray.started) in ray.late)
                ray.started.append(handle)
                return handle

        return _Remote()

    def wait(self, refs, num_returns, timeout):
        return [r for r in refs if not r.late], [r for r in refs if r.late]

    def get(self, refs):
        for ref in refs if isinstance(refs, list) else [refs]:
            if ref.error is not None:
                raise ref.error
        return [r.value for r in refs] if isinstance(refs, list) else refs.value

    def kill(self, actor):
        self.killed.append(actor)


class _Actor(RemoteActor):
    def __init__(self, index: int, error: Exception | None = None):
        with self._building():
            if error is not None:
                raise error
            self.index = index

    def ready(self) -> int:
        self._check_built()
        return self.index


class _Driver(ActorDriver):
    def __init__(self, ray):
        self.ray, self.actors = ray, []


def _start(driver, arguments):
    return driver.start_actors(
        _Actor, arguments, timeout_s=5, late=lambda missing, started: f"{missing} of {started} late", num_cpus=0.5
    )


def test_more_cpus_than_the_cluster_has_is_one_usage_error():
    driver = _Driver(_Ray(cpus=2))
    driver.require_cpus(4, "workers", "worker_cpus", 0.5, "lower workers")
    with pytest.raises(UsageError, match=r"^3 actors x actor_cpus=1 need 3 CPUs but Ray has 2; lower actors$"):
        driver.require_cpus(3, "actors", "actor_cpus", 1.0, "lower actors")


def test_ready_actors_answer_in_order_with_rays_restarts_off():
    ray = _Ray(cpus=2)
    driver = _Driver(ray)
    assert _start(driver, [(0,), (1,), (2,)]) == [0, 1, 2]
    assert len(driver.actors) == 3 and ray.options == {"max_restarts": 0, "num_cpus": 0.5}
    driver.stop()
    assert driver.actors == [] and len(ray.killed) == 3


def test_actors_not_ready_in_time_are_all_stopped_and_counted_in_the_message():
    ray = _Ray(cpus=2, late=(1,))
    driver = _Driver(ray)
    with pytest.raises(UsageError, match=r"^1 of 3 late$"):
        _start(driver, [(0,), (1,), (2,)])
    assert driver.actors == [] and ray.killed == ray.started


def test_an_actors_construction_error_reaches_the_driver():
    driver = _Driver(_Ray(cpus=2, late=(0,)))  # a failed actor says why, even when another is late
    with pytest.raises(UsageError, match=r"^unknown task 'x'$"):
        _start(driver, [(0,), (1, UsageError("unknown task 'x'"))])
    driver = _Driver(_Ray(cpus=2))
    with pytest.raises(_TaskError, match="broken"):  # any other error stays Ray's task error
        _start(driver, [(0, ValueError("broken"))])


def test_seeds_differ_in_every_entry_and_repeat_for_the_same_entries():
    seeds = {seed_from(*entries) for entries in [(7, 0, 0), (8, 0, 0), (7, 1, 0), (7, 0, 1), (7, 0, 0, 1)]}
    assert len(seeds) == 5 and seed_from(7, 0, 0) == seed_from(7, 0, 0)
