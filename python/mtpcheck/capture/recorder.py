"""What a capture holds while the engine runs: draft chains of steps, each
step the tensors seen by the hooks at one call of an MTP layer.  Bounded:
`steps` per chain, `chains` chains, `max_tokens` rows per tensor, `layers`
(which MTP layers), `max_bytes` in memory (the dump is no larger)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class Bounds:
    def __init__(self, steps=3, chains=1, max_tokens=16, layers=None, max_bytes=256 << 20,
                 skip_chains=0):
        if steps < 1 or chains < 1 or max_tokens < 1 or max_bytes < 1 or skip_chains < 0:
            raise ValueError("capture bounds must be positive (steps, chains, max_tokens, max_bytes)")
        self.steps = int(steps)
        self.chains = int(chains)
        self.max_tokens = int(max_tokens)
        self.layers = None if layers is None else sorted({int(x) for x in layers})
        self.max_bytes = int(max_bytes)
        self.skip_chains = int(skip_chains)

    def describe(self) -> str:
        layers = "all" if self.layers is None else ",".join(map(str, self.layers))
        return ("%d chain(s) of up to %d draft step(s) (after skipping %d), at most %d token rows per "
                "tensor, MTP layers %s, at most %d MiB of tensors"
                % (self.chains, self.steps, self.skip_chains, self.max_tokens, layers,
                   self.max_bytes >> 20))


class Step:
    """One call of one MTP layer: `tensors` maps dump names to CPU torch
    tensors (rows cut to max_tokens); `raw_out` is the layer's return value."""

    def __init__(self, layer, index):
        self.layer = layer
        self.index = index
        self.tensors = {}
        self.raw_out = None
        self.logits_calls = []  # (hidden fed to the head GEMM, logits)


def _keep(t, rows):
    t = t.detach()
    if t.dim() >= 1 and t.shape[0] > rows:
        t = t[:rows]
    return t.to("cpu", copy=True).contiguous()


class Recorder:
    def __init__(self, bounds):
        self.bounds = bounds
        self.chains = []  # finished chains: lists of Step
        self.current = None
        self.seen_chains = 0
        self.bytes = 0
        self.full = False
        self.notes = []
        self.lock = threading.Lock()

    @property
    def done(self) -> bool:
        return self.full or len(self.chains) >= self.bounds.chains

    def begin_chain(self) -> None:
        """The engine starts a new round of drafting (one chain of steps)."""
        with self.lock:
            self._close_chain()
            if self.done:
                return
            self.seen_chains += 1
            if self.seen_chains > self.bounds.skip_chains:
                self.current = []

    def end_chain(self) -> None:
        with self.lock:
            self._close_chain()

    def _close_chain(self):
        if self.current:
            self.chains.append(self.current)
        self.current = None

    def recording(self, layer: int) -> bool:
        if self.current is None or self.done:
            return False
        if self.bounds.layers is not None and layer not in self.bounds.layers:
            return False
        return len(self.current) < self.bounds.steps

    def begin_step(self, layer: int) -> Step | None:
        if not self.recording(layer):
            return None
        step = Step(layer, len(self.current))
        self.current.append(step)
        return step

    def keep(self, step: Step | None, name: str, tensor: torch.Tensor | None) -> None:
        if step is None or tensor is None:
            return
        kept = _keep(tensor, self.bounds.max_tokens)
        size = kept.numel() * kept.element_size()
        if self.bytes + size > self.bounds.max_bytes:
            self.full = True
            self.notes.append("stopped at the byte bound (%d bytes) in step %d" %
                              (self.bounds.max_bytes, step.index))
            return
        self.bytes += size
        step.tensors[name] = kept
