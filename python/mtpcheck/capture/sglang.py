"""SGLang integration of the capture hooks (NextN modules: deepseek_nextn.py,
glm4_moe_nextn.py, glm4_moe_lite_nextn.py, glm_ocr_nextn.py,
hunyuan_v3_nextn.py).

SGLang's EAGLE worker feeds the next draft step the hidden states that the
logits processor hands back with the logits (`LogitsProcessorOutput.
hidden_states`: the hidden it was given, or `hidden_states_before_norm` when
the model passes one, sglang/srt/layers/logits_processor.py).  Inside a chain
the hooks record what actually came in (`forward_batch.spec_info.
hidden_states` of the next step); for the last step, what the logits
processor handed back, kept by its hook (the model's return value where the
output carried none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import vllm as _common
from .hooks import LogitsHook

if TYPE_CHECKING:
    import torch

    from . import Capture
    from .recorder import Step


def find_root(module: torch.nn.Module) -> torch.nn.Module:
    return _common.find_root(module)


class _LogitsHook(LogitsHook):
    """LogitsHook that also keeps the hidden the output hands back."""

    def _hook(self, module, args, kwargs, out):
        step = self.step()
        fresh = step is not None and "logits" not in step.tensors
        super()._hook(module, args, kwargs, out)
        if fresh:
            self.capture.recorder.keep(step, "handed_back", getattr(out, "hidden_states", None))


def logits_hook(capture: Capture, module: torch.nn.Module) -> LogitsHook:
    return _LogitsHook(capture, module, hidden_args=("hidden_states",),
                       logits_attr="next_token_logits")


def engine_info(capture: Capture, model: torch.nn.Module) -> dict[str, Any]:
    try:
        import sglang

        version = "sglang " + getattr(sglang, "__version__", "?")
    except Exception:  # noqa: BLE001 -- any import failure is reported as not importable
        version = "sglang (not importable)"
    note = _common.interpreter_note()  # the SGLang sweep's too (DeepSeek V4's mHC kernels)
    return {"version": version, "notes": [note] if note else []}


def recycled_of(capture: Capture, step: Step) -> torch.Tensor | None:
    kept = step.tensors.get("handed_back")
    return kept if kept is not None else step.tensors.get("out.0")


def embed_table(capture: Capture) -> torch.Tensor | None:
    """The draft model's embedding table, by name: `embed_tokens`, or Bailing's
    `word_embeddings`."""
    for name, m in capture.root.named_modules():
        if name.endswith(("embed_tokens", "word_embeddings")) and hasattr(m, "weight"):
            return m.weight
    return None


# the same rule as vLLM's: SiluAndMul rounding by device
conventions = _common.conventions
