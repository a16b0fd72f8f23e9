"""The learner step replayed as a CUDA graph, for the value-based agents on a GPU.

At batch 32 a learner update is launch-bound on a GPU, not arithmetic-bound: Rainbow-IQN's is
about 65 GFLOP, well under a millisecond of an H100's matrix rate, but several hundred kernel
launches from Python, each a few microseconds of CPU time. A CUDA graph (PyTorch's "CUDA Graphs"
notes, whole-network capture) records those launches once and replays them with one call.

:class:`GraphedLearnerStep` runs ``agent.learner_step`` (the losses, the backward pass, the norm
clip and the optimizer step) for ``ValueBasedAgent.update``:

1. its first :data:`EAGER_STEPS` calls run eagerly on the graph's own stream, as the notes ask
   (the optimizer's state, cuBLAS and cuDNN handles and their algorithm choices then exist);
2. the next call captures the step into a graph and replays it; every later call copies the new
   batch into the graph's input tensors (through pinned host buffers) and replays.

What stays the same as the eager step: the arithmetic, kernel for kernel. The random draws (the
noisy layers' noise, IQN's quantile fractions) come from the agent's own generator, registered
with the graph, so each replay draws fresh numbers from the generator's seed (the graph advances
the generator's offset by what it drew at capture; an eager run's draws are not promised). What
a graph cannot follow, and what therefore starts a new capture: new network, optimizer or
generator objects (a loaded checkpoint), a batch of other entries or shapes, and the one branch a
head takes on Python state, ``target_is_online`` (one graph per value).

Hand-written because no library captures a training step whose inputs come from a host-side
replay memory: ``torch.cuda.make_graphed_callables`` graphs a module's forward and backward
only (not the optimizer step), and ``torch.compile(mode="reduce-overhead")`` would recompile
around the agent's Python control flow.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from benchgen_agents.value_based.augmentation import DRAW_KEYS

#: eager steps on the capture stream before the capture (PyTorch's notes warm up 3 iterations)
EAGER_STEPS = 3

#: the batch entries the learner step reads: the replay's n-step transitions and PER weights, and
#: the augmentation's draws (``augmentation.DRAW_KEYS``) where the agent augments
INPUT_KEYS = ("obs", "actions", "returns", "discounts", "next_obs", "weights")


def graphs_supported() -> bool:
    """Whether this torch can capture random draws from a generator of the agent's own
    (``CUDAGraph.register_generator_state``, torch 2.5 and later)."""
    return hasattr(torch.cuda.CUDAGraph, "register_generator_state")


def make_capturable(optimizer: torch.optim.Optimizer) -> None:
    """Let ``optimizer.step`` be captured: torch refuses a capture unless every parameter group
    is ``capturable`` (its step counts then live on the device, which the fused Adam does anyway)."""
    for group in optimizer.param_groups:
        group["capturable"] = True
    for param, state in optimizer.state.items():
        step = state.get("step")
        if isinstance(step, torch.Tensor) and step.device != param.device:
            state["step"] = step.to(param.device)


class GraphedLearnerStep:
    """``agent.learner_step`` on a CUDA device, captured after :data:`EAGER_STEPS` eager calls
    (see the module docstring). Call it with a replay batch (numpy arrays); it returns the step's
    device output, valid until its next call: copy it to the host before calling again."""

    def __init__(self, agent):
        self.agent = agent
        self.stream = torch.cuda.Stream(device=agent.device)
        self._reset(owner=None, layout=None)

    def _reset(self, owner, layout) -> None:
        self.owner = owner  # (online, target, optimizer, generator) the graphs belong to
        self.layout = layout  # the batch entries the graphs read, and their shapes
        self.graphs: dict[bool, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self.eager_steps = 0
        self.staging: dict[str, torch.Tensor] = {}  # pinned host copies of the inputs
        self.inputs: dict[str, torch.Tensor] = {}  # the device tensors every graph reads

    def _stage(self, batch: dict[str, np.ndarray]) -> None:
        """Copy the batch into the graphs' input tensors (host -> pinned buffer -> device, the
        second copy asynchronous on the current stream). The caller's update ends by reading
        the step's output on the host, which waits for this copy, so the pinned buffers are
        free again by the next call."""
        device = self.agent.device
        for key in self.layout:
            array = torch.from_numpy(np.ascontiguousarray(batch[key]))
            if key not in self.staging:
                self.staging[key] = torch.empty(array.shape, dtype=array.dtype, pin_memory=True)
                self.inputs[key] = torch.empty(array.shape, dtype=array.dtype, device=device)
            self.staging[key].copy_(array)
            self.inputs[key].copy_(self.staging[key], non_blocking=True)

    def __call__(self, batch: dict[str, np.ndarray]) -> torch.Tensor:
        agent = self.agent
        owner = (agent.online, agent.target, agent.optimizer, agent.generator)
        keys = INPUT_KEYS + tuple(key for key in DRAW_KEYS if key in batch)
        layout = {key: np.shape(batch[key]) for key in keys}
        if self.owner is None or any(a is not b for a, b in zip(owner, self.owner)) or layout != self.layout:
            self._reset(owner, layout)
            make_capturable(agent.optimizer)
        self._stage(batch)
        current = torch.cuda.current_stream(agent.device)
        self.stream.wait_stream(current)
        key = bool(agent.target_is_online)
        if self.eager_steps < EAGER_STEPS:
            with torch.cuda.stream(self.stream), warnings.catch_warnings():
                # torch warns that a capturable optimizer stepping outside a capture is slower
                warnings.simplefilter("ignore", UserWarning)
                output = agent.learner_step(self.inputs)
            self.eager_steps += 1
            current.wait_stream(self.stream)
            return output
        if key not in self.graphs:
            graph = torch.cuda.CUDAGraph()
            graph.register_generator_state(agent.generator)
            with torch.cuda.graph(graph, stream=self.stream):
                output = agent.learner_step(self.inputs)
            self.graphs[key] = (graph, output)
        graph, output = self.graphs[key]
        with torch.cuda.stream(self.stream):
            graph.replay()
        current.wait_stream(self.stream)
        return output
