"""SGLang integration of the capture hooks (NextN modules: deepseek_nextn.py,
glm4_moe_nextn.py).

SGLang's EAGLE worker feeds the next draft step the hidden states that the
logits processor hands back with the logits: for NextN, the model's return
value (the normed hidden).  Inside a chain the hooks record what actually came
in (`forward_batch.spec_info.hidden_states` of the next step); for the last
step the model's return value is used.
"""

from . import vllm as _common
from .hooks import LogitsHook


def find_root(module):
    return _common.find_root(module)


def logits_hook(capture, module):
    return LogitsHook(capture, module, hidden_args=("hidden_states",),
                      logits_attr="next_token_logits")


def engine_info(capture, model):
    try:
        import sglang

        version = "sglang " + getattr(sglang, "__version__", "?")
    except Exception:
        version = "sglang (not importable)"
    return {"version": version, "notes": []}


def recycled_of(capture, step):
    return step.tensors.get("out.0")


# the same rules as vLLM's: SiluAndMul rounding by device, the embedding table by name
conventions = _common.conventions
embed_table = _common.embed_table
