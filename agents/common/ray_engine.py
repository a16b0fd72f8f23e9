"""The one Ray engine the agents' distributed settings share: data-parallel worker groups
(:mod:`benchgen_agents.data_parallel.engine`, gradients all-reduced in rounds) and Ape-X
(:mod:`benchgen_agents.rainbow_iqn.apex`, actors feeding one replay learner).

Both run the same driver pattern, held here once:

* Ray is imported on demand (:func:`import_ray`), with a one-line ``UsageError`` where it is
  missing;
* the driver refuses, before starting anything, more actors than the cluster's CPUs hold
  (:meth:`ActorDriver.require_cpus`);
* actors are started with Ray's own restarts off (the engine decides what a lost actor costs),
  then asked ``ready`` within a time limit; an actor's constructor keeps its failure
  (:class:`RemoteActor`) so that ``ready`` reports it as the exception it was, and a worker's
  ``UsageError`` reaches the user as one (:meth:`ActorDriver.get`);
* the driver kills its actors when it stops (:meth:`ActorDriver.stop`);
* every actor's seed is drawn from the unit's seed and the actor's place (:func:`seed_from`).

What each setting does with its actors (rounds and restarts, or chunks and a replay) stays in its
own module. This module imports neither torch nor numpy at load time, so a config module may
import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from benchgen.errors import UsageError

RAY_MISSING = "Ray is not installed; pip install 'benchgen[ray]'"


def import_ray():
    """The ``ray`` module, or a one-line ``UsageError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(RAY_MISSING) from None
    return ray


def seed_from(*entries: int) -> int:
    """A seed drawn from ``entries`` (the unit's seed, its steps done, the actor's index, ...):
    different whenever one of them is, so fresh environments after a resume or a restart do not
    replay the episodes they began with."""
    import numpy as np

    return int(np.random.SeedSequence([int(e) for e in entries]).generate_state(1)[0])


class RemoteActor:
    """Base of a class run as a Ray actor: a failure while it is built is kept for ``ready``,
    where Ray reports it as the exception it was (a constructor's exception only comes back as
    "the actor died")."""

    _init_error: Exception | None = None

    @contextlib.contextmanager
    def _building(self) -> Iterator[None]:
        """The actor's construction: an exception raised inside is kept for :meth:`_check_built`."""
        try:
            yield
        except Exception as exc:
            self._init_error = exc

    def _check_built(self) -> None:
        """Raise the exception the actor's construction ended with, if any."""
        if self._init_error is not None:
            raise self._init_error


class ActorDriver:
    """The driver's side of a set of Ray actors started together: a subclass sets :attr:`ray`
    (the connected module) before it starts any."""

    ray: Any = None
    #: the running actors, in the order they were started (empty once stopped)
    actors: list[Any]

    def require_cpus(self, count: int, what: str, setting: str, cpus: float, advice: str) -> None:
        """A one-line ``UsageError`` if the cluster cannot hold ``count`` actors of ``cpus`` CPUs
        each (``what``: "workers", "actors"; ``setting``: the setting that asks for the CPUs;
        ``advice``: what the user can do)."""
        need = count * cpus
        have = self.ray.cluster_resources().get("CPU", 0.0)
        if need > have + 1e-9:
            raise UsageError(f"{count} {what} x {setting}={cpus:g} need {need:g} CPUs but Ray has {have:g}; {advice}")

    def start_actors(
        self,
        actor_class: type,
        arguments: Sequence[tuple],
        *,
        ready_args: tuple = (),
        timeout_s: float,
        late: Callable[[int, int], str],
        **options: Any,
    ) -> list[Any]:
        """Start one ``actor_class`` actor per entry of ``arguments`` (its constructor's
        arguments) with the Ray ``options`` (CPUs, GPUs) and Ray's restarts off; return their
        ``ready(*ready_args)`` answers. An actor that fails to start raises its error; actors
        not ready within ``timeout_s`` stop them all and raise a ``UsageError`` whose message is
        ``late(missing, started)``."""
        remote = self.ray.remote(actor_class)
        self.actors = [remote.options(max_restarts=0, **options).remote(*args) for args in arguments]
        ready = [actor.ready.remote(*ready_args) for actor in self.actors]
        done, _ = self.ray.wait(ready, num_returns=len(ready), timeout=timeout_s)
        if len(done) < len(ready):
            self.get(done)  # an actor that failed to start says why
            message = late(len(ready) - len(done), len(ready))
            self.stop()
            raise UsageError(message)
        return self.get(ready)

    def get(self, refs):
        """``ray.get`` that turns an actor's ``UsageError`` back into a ``UsageError``."""
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, UsageError):
                raise UsageError(str(cause)) from None
            raise

    def stop(self) -> None:
        """Kill every actor (those already gone included)."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # pragma: no cover - already gone
                pass
        self.actors = []
