"""Capture hooks: record the MTP draft steps of a live vLLM or SGLang engine
and write a captured-block dump for `mtpcheck verify`.

    import mtpcheck.capture
    cap = mtpcheck.capture.install(engine="vllm", path="/tmp/mtp.h5", steps=3,
                                   max_tokens=16, layers=None)
    ... run the engine (eager mode: hooks do not fire inside CUDA graphs) ...
    cap.write()          # also done when the bounds are reached, and at exit

Or, with no code change, MTPCHECK_CAPTURE=/tmp/mtp.h5:3 in the environment of a
vLLM process where this package is installed (its vllm.general_plugins entry
point installs the capture in every engine process).  `python -m
mtpcheck.capture --describe` prints what will be recorded.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import specs as _specs
from .recorder import Bounds, Recorder

if TYPE_CHECKING:
    import torch

    from .recorder import Step

ENV = "MTPCHECK_CAPTURE"
_active = []


class Capture:
    def __init__(self, engine, path, bounds, model=None, generator=None):
        if engine not in _specs.SPECS:
            raise ValueError("engine %r: one of %s" % (engine, ", ".join(_specs.SPECS)))
        self.engine = engine
        self.path = path
        self.bounds = bounds
        self.recorder = Recorder(bounds)
        self.generator = generator or "mtpcheck.capture (%s)" % engine
        self.root = None
        self.layer_modules = []
        self.attached = []
        self.logits_hooks = []
        self.global_handles = []
        self.last_step = None
        self.written = None
        self.manual_chains = False
        self.engine_info = {}
        self.handoff = None
        # False where the draft loop feeds no step's hidden to the next (SGLang's
        # multi-layer worker outside its chain_mtp_hidden_states list: every step
        # gets the target's): then no step has a recycled hidden to observe
        self.recycles = True
        self.integration = None
        if engine == "vllm":
            from . import vllm as integration
        else:
            from . import sglang as integration
        self.integration = integration
        if model is not None:
            self.attach(model)
        else:
            self._install_global()

    # -- finding the modules ------------------------------------------------------------
    def attach(self, model: torch.nn.Module) -> None:
        """Hooks every MTP layer of `model` (and its logits processor)."""
        from .hooks import Attached, ComputeLogitsHook, RootHook

        if self.root is model:
            return
        self.root = model
        layers = [(n, m) for n, m in model.named_modules() if _specs.spec_for(self.engine, m)]
        if not layers:
            raise RuntimeError("no %s MTP layer in %s (known: %s)" % (
                self.engine, type(model).__name__,
                ", ".join(c for s in _specs.SPECS[self.engine] for c in s.classes)))
        self.layer_modules = [m for _, m in layers]
        for i, (_, m) in enumerate(layers):
            self.attached.append(Attached(self, _specs.spec_for(self.engine, m), m, i))
        for _, m in model.named_modules():
            if type(m).__name__ == "LogitsProcessor":
                self.logits_hooks.append(self.integration.logits_hook(self, m))
        if any(a.spec.logits_at == "compute_logits" for a in self.attached):
            self.logits_hooks.append(ComputeLogitsHook(self, model))
        if _specs.spec_for(self.engine, model) is None:
            self.logits_hooks.append(RootHook(self, model))
        self.engine_info = self.integration.engine_info(self, model)

    def root_of(self, layer: torch.nn.Module) -> torch.nn.Module:
        """The draft model holding `layer` (what a spec's "..name" weights hang
        from): the root, or, where the root holds one draft model a step (an
        nn.ModuleList: SGLang's multi-layer worker, one runner a step), the
        one of them that contains the layer."""
        import torch

        if isinstance(self.root, torch.nn.ModuleList):
            for model in self.root:
                if any(m is layer for m in model.modules()):
                    return model
        return self.root

    def _install_global(self):
        """No model at hand (a plugin or a call before the engine is built):
        global forward hooks keep the stack of modules in flight; the first
        MTP layer that runs is hooked with the outermost of them (the draft
        model), and the global hooks come off."""
        import torch

        stack = []
        markers = []  # logits processors of models without MTP layers (the target's)

        def pre(module, args, kwargs=None):
            stack.append(module)
            if self.root is None and type(module).__name__ == "LogitsProcessor":
                self._attach_at_logits(module, markers)
                return
            if self.root is not None or not _specs.spec_for(self.engine, module):
                return
            root = stack[0] if any(m is module for m in stack[0].modules()) else None
            self.attach(root if root is not None else self.integration.find_root(module))
            for a in self.attached:
                if a.layer is module:
                    a._pre(module, args, kwargs or {})
            self._remove_global()

        def post(module, args, out):
            if stack and stack[-1] is module:
                stack.pop()

        reg = torch.nn.modules.module
        self.global_handles.append(reg.register_module_forward_pre_hook(pre))
        self.global_handles.append(reg.register_module_forward_hook(post, always_call=True))

    def _attach_at_logits(self, processor: torch.nn.Module, markers: list) -> None:
        """A draft model whose MTP layers run no module hooks (a predictor
        whose class replaces `__call__`: vLLM's `@support_torch_compile`) is
        first seen at its logits processor, mid-round: hooked from there, it
        records from the next round on, each round opened by a call of the
        target's logits processor (one with no MTP layer in its model, seen
        before). A processor whose model has no MTP layer is such a marker."""
        if any(m is processor for m in markers):
            return
        root = self.integration.find_root(processor)
        if not any(_specs.spec_for(self.engine, m) for m in root.modules()):
            markers.append(processor)
            return
        self.attach(root)
        self._remove_global()
        self.manual_chains = True  # nothing is recorded until the next round opens
        for marker in markers:
            self.global_handles.append(
                marker.register_forward_pre_hook(lambda m, a: self.recorder.begin_chain()))

    def _remove_global(self):
        for h in self.global_handles:
            h.remove()
        self.global_handles = []

    # -- chains -------------------------------------------------------------------------
    def new_chain(self) -> None:
        """Starts a new draft round (the engine integration or the user calls it)."""
        self.manual_chains = True
        self.recorder.begin_chain()

    def end_chain(self) -> None:
        self.recorder.end_chain()

    def auto_chain(self) -> bool:
        """Called at each layer call: without explicit chain marks, a chain is
        `steps` consecutive calls."""
        rec = self.recorder
        if rec.done:
            return False
        if not self.manual_chains and (rec.current is None or len(rec.current) >= self.bounds.steps):
            rec.begin_chain()
        return True

    def step_done(self, step: Step) -> None:
        self.last_step = step
        rec = self.recorder
        if not self.manual_chains and rec.current is not None and len(rec.current) >= self.bounds.steps:
            rec.end_chain()

    # -- engine rules -------------------------------------------------------------------
    def recycled_of(self, step: Step) -> torch.Tensor | None:
        """What the engine feeds forward from this step, by the engine's own code."""
        return self.integration.recycled_of(self, step)

    def engine_conventions(self, step: Step) -> dict[str, Any]:
        return self.integration.conventions(self, step)

    def embed_table(self) -> torch.Tensor | None:
        return self.integration.embed_table(self)

    def describe(self) -> str:
        return ("captured by mtpcheck.capture from %s (%s); bounds: %s"
                % (self.engine, self.engine_info.get("version", "version unknown"),
                   self.bounds.describe()) + "".join("; " + n for n in self.engine_info.get("notes", [])))

    # -- the target's hand-off to draft step 0 ---------------------------------------------
    def record_handoff(self, hidden: torch.Tensor, residual: torch.Tensor,
                       norm_weight: torch.Tensor, handoff: torch.Tensor, eps: float,
                       source: str, rounding: str = "eager") -> None:
        """Records what the target handed draft step 0 (SPEC.md §5.5): its last
        decoder layer's output and residual, its final norm's weight, and the
        hidden step 0 received, as the engine computed them (`source` says
        where); `rounding` is the norm's (a GemmaRMSNorm's is fused). Written as
        the `target_handoff` case "handoff" (docs/DUMPS.md)."""
        self.handoff = {"target_hidden": hidden.detach(), "target_residual": residual.detach(),
                        "target_norm_weight": norm_weight.detach(), "handoff": handoff.detach(),
                        "eps": float(eps), "source": source, "rounding": rounding}

    # -- output -------------------------------------------------------------------------
    def write(self, path: str | None = None) -> list[str]:
        """Writes the dump (once); returns the list of case ids."""
        from . import assemble

        self.recorder.end_chain()
        if not self.recorder.chains:
            return []
        path = path or self.path
        try:
            cases, notes = assemble.write(self, path, self.generator, self.bounds.max_bytes)
        except Exception as e:
            self.written = (path, [], ["not written: %s" % e])  # not retried at exit
            raise
        self.written = (path, cases, notes)
        return cases

    def remove(self) -> None:
        self._remove_global()
        for a in self.attached:
            a.remove()
        for h in self.logits_hooks:
            h.remove()
        self.attached, self.logits_hooks = [], []


def install(engine: str = "vllm", path: str = "mtp_capture.h5", steps: int = 3,
            max_tokens: int = 16, layers: Iterable[int] | None = None, chains: int = 1,
            max_bytes: int = 256 << 20, skip_chains: int = 0,
            model: torch.nn.Module | None = None) -> Capture:
    """Installs capture hooks; returns the Capture.  With `model`, the hooks go
    on its MTP layers now; without, on the first MTP model that runs."""
    cap = Capture(engine, path, Bounds(steps=steps, chains=chains, max_tokens=max_tokens,
                                       layers=layers, max_bytes=max_bytes, skip_chains=skip_chains),
                  model=model)
    _active.append(cap)
    return cap


def parse_env(value: str) -> dict[str, Any]:
    """MTPCHECK_CAPTURE = PATH[:STEPS[:KEY=VALUE,...]] -> install() kwargs."""
    path, _, rest = value.partition(":")
    if not path:
        raise ValueError("%s: empty path" % ENV)
    kwargs = {"path": path}
    steps, _, opts = rest.partition(":")
    if steps:
        kwargs["steps"] = int(steps)
    for item in filter(None, opts.split(",")):
        key, _, v = item.partition("=")
        if key == "layers":
            kwargs["layers"] = [int(x) for x in v.split("+")]
        elif key in ("engine",):
            kwargs[key] = v
        elif key in ("max_tokens", "chains", "max_bytes", "skip_chains"):
            kwargs[key] = int(v)
        else:
            raise ValueError("%s: unknown option %r" % (ENV, key))
    return kwargs


def install_from_env(default_engine: str = "vllm") -> Capture | None:
    value = os.environ.get(ENV)
    if not value:
        return None
    kwargs = parse_env(value)
    kwargs.setdefault("engine", default_engine)
    path = kwargs["path"]
    if "%p" in path:
        kwargs["path"] = path.replace("%p", str(os.getpid()))
    return install(**kwargs)


@atexit.register
def _write_at_exit():
    for cap in _active:
        if cap.written is None and cap.recorder.chains:
            try:
                cap.write()
            except Exception as e:  # noqa: BLE001 -- never take the engine down at exit
                print("mtpcheck.capture: could not write %s: %s" % (cap.path, e))
