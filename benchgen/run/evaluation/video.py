"""``benchgen video``: MP4s of a run's agent playing a task, from one of its checkpoints.

The agent plays greedily (evaluation mode) in the suite's video env (``Suite.make_video_env``:
the run's protocol, one sub-environment); every agent step appends the suite's full-resolution
screen (``Suite.screens``, not the agents' 84x84 view) with the episode's raw score and frame count
drawn on it, streamed to the file (an Atari episode may last 100 hours of play). Each episode is
recorded in the run's store like any evaluation episode, under the phase ``video`` of the unit that
trained the agent, its ``extras`` naming the checkpoint and the video file. Written with imageio
and its ffmpeg plugin (H.264), at the game's own speed (60 / frames per step frames per second).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchgen.errors import UsageError
from benchgen.phases import FINETUNE, JOINT, TRAIN, VIDEO
from benchgen.remote import EpisodeTracker
from benchgen.results.rundir import RunDir
from benchgen.results.store import Unit
from benchgen.run.execution.recorder import EpisodeRecorder
from benchgen.run.planning.plan import resolve_from_meta
from benchgen.suite import EpisodeEnd

#: emulator frames per second of the games (Atari and Genesis: 60)
GAME_FPS = 60


class _ScreenTracker(EpisodeTracker):
    """Frames, the raw score so far, and the episode ends of the video env."""

    def __init__(self, env):
        super().__init__(env)
        self.score = 0.0
        self.ended: list[EpisodeEnd] = []

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = super().step(actions)
        self.score += float(rewards[0])
        return obs, rewards, terminated, truncated, infos

    def take(self, ends: list[EpisodeEnd]) -> None:
        self.ended += ends


def _unit_for(units: list[Unit], task: str) -> Unit:
    trained = [u for u in units if u.learn and task in u.tasks and u.last_checkpoint]
    if not trained:
        raise UsageError(f"no trained unit of this run played '{task}' and left a checkpoint; pick another --task")
    order = {FINETUNE: 0, TRAIN: 1, JOINT: 2}
    return min(trained, key=lambda u: (order.get(u.phase, 3), u.seed))


def _checkpoint(run_dir: RunDir, unit: Unit, frames: int | None) -> tuple[Path, int]:
    if frames is None:
        return run_dir.absolute(unit.last_checkpoint), int(unit.last_checkpoint_frames or 0)
    folder = run_dir.checkpoints_dir(unit.unit_id)
    kept = sorted(int(p.name) for p in folder.glob("*") if p.name.isdigit()) if folder.is_dir() else []
    at_or_past = [f for f in kept if f >= frames]
    if not at_or_past:
        raise UsageError(
            f"unit {unit.unit_id} kept no checkpoint at or past {frames:,} frames (it kept: "
            f"{', '.join(f'{f:,}' for f in kept) or 'none'}); pick one of those with --checkpoint"
        )
    return run_dir.checkpoint_dir(unit.unit_id, at_or_past[0]), at_or_past[0]


def _annotated(screen: np.ndarray, score: float, frames: int) -> np.ndarray:
    """The screen scaled up twice (nearest neighbour), with score and frame count drawn above it."""
    import cv2

    big = np.repeat(np.repeat(screen, 2, axis=0), 2, axis=1)
    banner = np.zeros((28, big.shape[1], 3), dtype=np.uint8)
    text = f"score {score:,.0f}   frame {frames:,}"
    cv2.putText(banner, text, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    frame = np.concatenate([banner, big], axis=0)
    pad_h, pad_w = (-frame.shape[0]) % 16, (-frame.shape[1]) % 16  # H.264 wants multiples of 16
    return np.pad(frame, ((0, pad_h), (0, pad_w), (0, 0)))


def record_videos(path: str | Path, task: str, checkpoint: int | None = None, episodes: int = 1) -> list[Path]:
    """Write ``episodes`` MP4s of the run's agent playing ``task``; return their paths. Holds the
    run's lock: a run that is training (or being filmed) is refused in one line."""
    from benchgen.registry import get_registry

    if episodes < 1:
        raise UsageError("--episodes must be at least 1")
    run_dir = RunDir(path)
    record = run_dir.record()
    if task not in record.tasks and task not in ((record.split or {}).get("test") or []):
        raise UsageError(f"this run did not play '{task}' (it played {', '.join(record.tasks[:6])})")
    r = resolve_from_meta(get_registry(), record)
    # the videos' episodes are written into the run's store: not while the run trains (or films)
    with run_dir.lock(then="film it"):
        return _record(run_dir, r, task, checkpoint, episodes)


def _record(run_dir: RunDir, r, task: str, checkpoint: int | None, episodes: int) -> list[Path]:
    import imageio.v2 as imageio

    from benchgen.run.execution.build import build_agent, load_checkpoint

    store = run_dir.store()
    try:
        unit = _unit_for(store.units(), task)
        ckpt, frames_at = _checkpoint(run_dir, unit, checkpoint)
        suite_env = r.suite.make_video_env(task, seed=unit.seed * 7_919 + frames_at)
        tracker = _ScreenTracker(suite_env)
        env = r.suite.agent_wrappers(tracker, r.spec.needs)
        # the unit's recorder numbers and commits the video episodes; only the tracker steps the env,
        # so the unit's frame counter is not advanced by a video
        recorder = EpisodeRecorder(suite_env, store, unit, frames_done=unit.frames_done)
        paths = []
        try:
            agent = build_agent(r, env, unit.tasks)
            load_checkpoint(
                agent, ckpt, "checkpoint", "restore it from a copy of the run, or film another (--checkpoint)"
            )
            obs, _ = env.reset(seed=unit.seed)
            if r.suite.screens(suite_env) is None:
                raise UsageError(f"suite '{r.suite.name}' cannot show its screen, so it has no videos")
            out = run_dir.videos_dir()
            out.mkdir(exist_ok=True)
            for k in range(episodes):
                # (named after the stored task id: through the run's sanitizer and containment check)
                target = run_dir.output_file(
                    out, f"{task}-s{unit.seed}-{frames_at}-{recorder.episodes_of(task) + k}.mp4"
                )
                tmp = run_dir.inside(out / f".{target.name}.part.mp4")
                tmp.unlink(missing_ok=True)  # (a link there is not written through; the rename replaces one)
                tracker.score, tracker.ended, start = 0.0, [], tracker.frames_done
                writer = imageio.get_writer(
                    tmp, fps=GAME_FPS / suite_env.frames_per_step, codec="libx264", macro_block_size=1
                )
                try:
                    writer.append_data(_annotated(r.suite.screens(suite_env)[0], 0, 0))
                    while not tracker.ended:
                        obs, *_ = env.step(agent.act(obs, greedy=True))
                        if not tracker.ended:
                            frame = r.suite.screens(suite_env)[0]
                            writer.append_data(_annotated(frame, tracker.score, tracker.frames_done - start))
                finally:
                    writer.close()
                end = tracker.ended[0]
                tmp.replace(target)
                recorder.record(
                    [end],
                    0,
                    phase=VIDEO,
                    extras={"checkpoint_frames": frames_at, "video": run_dir.relative(target)},
                )
                paths.append(target)
        finally:
            env.close()
        return paths
    finally:
        store.close()
