"""Torch forward hooks on an engine's MTP modules, engine-neutral: an adapter
(`specs.LayerSpec`) says which modules and arguments hold what, and these
hooks put the tensors of each call into the Recorder."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from .recorder import Step


def bind(module: torch.nn.Module, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by name, as the module's forward declares them
    (the engine's own forward where `wrap_forward` put a wrapper over it)."""
    try:
        sig = inspect.signature(getattr(module, "_mtpcheck_forward", module.forward))
        return sig.bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return dict(kwargs)


def _first(named, names):
    for n in names:
        if named.get(n) is not None:
            return named[n]
    return None


def runs_hooks(module: torch.nn.Module) -> bool:
    """Whether calling the module runs its forward hooks: a class that
    replaces `nn.Module.__call__` (vLLM's `@support_torch_compile`, which calls
    `self.forward` directly) does not."""
    import torch

    return type(module).__call__ is torch.nn.Module.__call__


def wrap_forward(module: torch.nn.Module, pre: Any, post: Any) -> Any:
    """`pre(module, args, kwargs)` and `post(module, args, kwargs, out)` around
    the module's own forward, for a module whose call skips its hooks; returns
    a handle whose remove() puts the engine's forward back."""
    orig = module.forward

    def forward(*args, **kwargs):
        pre(module, args, kwargs)
        out = orig(*args, **kwargs)
        post(module, args, kwargs, out)
        return out

    module._mtpcheck_forward = orig
    module.forward = forward

    class Handle:
        def remove(self) -> None:
            if module.__dict__.get("forward") is forward:
                del module.forward
                del module._mtpcheck_forward

    return Handle()


class Attached:
    """The hooks on one MTP layer module (and its block), removable. A block
    written inline in the layer (no block module) is read at its sub-modules:
    the spec's `block_taps` name, for each block tensor, the sub-module and
    whether it is that module's input or output."""

    def __init__(self, capture, spec, layer_module, layer_index):
        self.capture = capture
        self.spec = spec
        self.layer = layer_module
        self.index = layer_index
        self.handles = []
        self.step = None
        block = spec.block(layer_module)
        if runs_hooks(layer_module):
            self.handles.append(layer_module.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(layer_module.register_forward_hook(self._post, with_kwargs=True))
        else:
            self.handles.append(wrap_forward(layer_module, self._pre, self._post))
        for name, (dotted, side, index) in (spec.block_taps or {}).items():
            self.handles.append(self._tap(spec.weight(layer_module, dotted), name, side, index))
        if block is not None:
            self.handles.append(block.register_forward_hook(self._block, with_kwargs=True))
        tail = spec.weight(layer_module, spec.block_tail) if spec.block_tail else None
        if tail is not None:
            self.handles.append(tail.register_forward_pre_hook(self._tail))

    def remove(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []

    def _tap(self, module, name, side, index):
        """Keeps `name` = the tapped sub-module's positional input (side "in")
        or output (side "out") number `index`, once per step."""
        if module is None:
            raise RuntimeError("block tap %s: the layer has no such sub-module" % name)

        def keep(values):
            values = values if isinstance(values, (tuple, list)) else (values,)
            if self.step is not None and name not in self.step.tensors and index < len(values):
                self.capture.recorder.keep(self.step, name, values[index])

        if side == "in":
            return module.register_forward_pre_hook(lambda m, args: keep(args))
        return module.register_forward_hook(lambda m, args, out: keep(out))

    def _pre(self, module, args, kwargs):
        rec = self.capture.recorder
        self.step = rec.begin_step(self.index) if self.capture.auto_chain() else None
        if self.step is None:
            return
        self.step.spec = self.spec
        self.step.module = module
        named = bind(module, args, kwargs)
        for value in named.values():
            if hasattr(value, "device"):
                self.step.device = value.device.type
                break
        for dump_name, arg_names in self.spec.layer_inputs.items():
            value = _first(named, arg_names)
            if value is None and dump_name in self.spec.layer_inputs_from:
                value = self.spec.layer_inputs_from[dump_name](module, named, self.capture.root)
            rec.keep(self.step, dump_name, value)

    def _block(self, module, args, kwargs, out):
        if self.step is None:
            return
        rec = self.capture.recorder
        named = bind(module, args, kwargs)
        if "block_in" not in (self.spec.block_taps or {}):  # a tap reads it before the call
            rec.keep(self.step, "block_in", _first(named, self.spec.block_input_args))
        if self.spec.block_outputs_from is not None:
            self._keep_outputs(self.spec.block_outputs_from(module, named, out))
        elif self.spec.block_tail is None:
            self._keep_outputs(out if isinstance(out, (tuple, list)) else (out,))

    def _tail(self, module, args):
        """The block's outputs as the module after it receives them."""
        if self.step is not None:
            self._keep_outputs(args)

    def _keep_outputs(self, outs):
        taps = self.spec.block_taps or {}
        for name, value in zip(self.spec.block_outputs, outs):
            if name is not None and name not in taps and hasattr(value, "detach"):
                self.capture.recorder.keep(self.step, name, value)

    def _post(self, module, args, kwargs, out):
        if self.step is None:
            return
        step, self.step = self.step, None
        step.raw_out = out
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for i, value in enumerate(outs):
            if hasattr(value, "detach"):
                self.capture.recorder.keep(step, "out.%d" % i, value)
        self.capture.step_done(step)


class LogitsHook:
    """The engine's logits computation: the hidden fed to the head GEMM and
    the logits, attached to the latest recorded step."""

    def __init__(self, capture, module, hidden_args=("hidden_states",), logits_attr=None):
        self.capture = capture
        self.hidden_args = hidden_args
        self.logits_attr = logits_attr
        self.handle = module.register_forward_hook(self._hook, with_kwargs=True)

    def remove(self) -> None:
        self.handle.remove()

    def step(self) -> Step | None:
        """The step these logits belong to: a layer still in flight (an engine
        whose draft model is the layer computes them inside it), else the
        last finished one."""
        inflight = [a.step for a in self.capture.attached if a.step is not None]
        return inflight[-1] if inflight else self.capture.last_step

    def _hook(self, module, args, kwargs, out):
        step = self.step()
        if step is None or "logits" in step.tensors:
            return
        named = bind(module, args, kwargs)
        hidden = _first(named, self.hidden_args)
        logits = getattr(out, self.logits_attr) if self.logits_attr else out
        rec = self.capture.recorder
        rec.keep(step, "hidden_post", hidden)
        rec.keep(step, "logits", logits)


class ComputeLogitsHook(LogitsHook):
    """A model whose compute_logits runs its head GEMM itself, calling no logits
    processor module (Inkling's: addmm with alpha = 1/mup, then the processor's
    gather as a plain method): its compute_logits is wrapped on the instance, the
    hidden it is given and the logits it returns kept as LogitsHook keeps them."""

    def __init__(self, capture, model):
        self.capture = capture
        self.hidden_args = ("hidden_states",)
        self.logits_attr = None
        self.model = model
        self.own = model.__dict__.get("compute_logits")  # an instance's own (a broken copy's)
        orig = model.compute_logits

        def compute_logits(*args, **kwargs):
            out = orig(*args, **kwargs)
            step = self.step()
            if step is not None and "logits" not in step.tensors and out is not None:
                named = inspect.signature(orig).bind_partial(*args, **kwargs).arguments
                self.capture.recorder.keep(step, "hidden_post", _first(named, self.hidden_args))
                self.capture.recorder.keep(step, "logits", out)
            return out

        model.compute_logits = compute_logits

    def remove(self) -> None:
        if self.own is None:
            self.model.__dict__.pop("compute_logits", None)
        else:
            self.model.compute_logits = self.own


class RootHook:
    """The draft model's own return value (what the proposer unpacks), kept as
    `model_out.<i>` on the step that produced it."""

    def __init__(self, capture, module):
        self.capture = capture
        self.handle = module.register_forward_hook(self._hook)

    def remove(self) -> None:
        self.handle.remove()

    def _hook(self, module, args, out):
        step = self.capture.last_step
        if step is None or "model_out.0" in step.tensors:
            return
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for i, value in enumerate(outs):
            if hasattr(value, "detach"):
                self.capture.recorder.keep(step, "model_out.%d" % i, value)
