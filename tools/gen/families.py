"""The model families as the generator knows them: one row each.

Why this exists: the generator is the independent implementation that the
goldens come from, so it keeps its own table of what varies between
families, written from the engines' code (the sources named in each row),
never read from the C tables in families/. The ops ask a row (`mhc`), never
compare a family's name.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Family:
    mhc: bool  # mHC streams: e_proj/h_proj per stream, hc_head, the streams recycled
    eps: float  # the checkpoints' rms_norm_eps, the cases' default
    source: str  # where the row was read
    # every RMSNorm weight multiplies as f32(1 + w) (SPEC.md §2.6; the engines'
    # GemmaRMSNorm: `self.weight.float() + 1.0`, vLLM layers/layernorm.py)
    zero_centred: bool = False
    hidden_first: bool = False  # eh_proj over [hnorm(h), enorm(e)] (MiMo's input_proj)
    recycles_pre_norm: bool = False  # the next step gets the sum before the final norm
    # the embedding normed by the target's embed_norm (embed_pre_norm_weight), rounded,
    # then by the layer's enorm (Inkling's embed_dual_rmsnorm_cat, pre_norm_weight)
    embed_pre_norm: bool = False
    # the logits divided by the case's logits_mup before they are stored (Inkling's
    # compute_logits: addmm alpha = 1 / logits_mup_width_multiplier)
    logits_mup: bool = False


FAMILIES = {
    "deepseek_v3": Family(False, 1e-6, "vllm deepseek_mtp.py; DeepSeek-V3 config.json"),
    "glm": Family(False, 1e-5, "vllm glm4_moe_mtp.py; GLM-4.5 config.json"),
    # GLM-4.7-Flash: DeepSeek V3's layer (enorm, hnorm, eh_proj over
    # [embedding, hidden], the block, the shared head's norm) over an MLA block
    "glm4_moe_lite": Family(False, 1e-5, "vllm 0.33.0 glm4_moe_lite_mtp.py; transformers "
                            "Glm4MoeLiteConfig (rms_norm_eps 1e-5)"),
    "deepseek_v4": Family(True, 1e-6, "vllm deepseek_v4/nvidia/mtp.py; DeepSeek-V4 config.json"),
    # Qwen3-Next / Qwen3.5: fc over [pre_fc_norm_embedding(e), pre_fc_norm_hidden(h)],
    # V3's math, every norm a GemmaRMSNorm
    "qwen3_next": Family(False, 1e-6, "vllm 0.33.0 qwen3_next_mtp.py, qwen3_5_mtp.py, "
                         "layers/layernorm.py GemmaRMSNorm; Qwen3-Next config.json", True),
    # MiMo-7B: torch.cat([previous_hidden_states, inputs_embeds]) into input_proj
    "mimo": Family(False, 1e-5, "vllm 0.33.0 mimo_mtp.py; XiaomiMiMo/MiMo modeling_mimo.py; "
                   "MiMo-7B config.json (rms_norm_eps 1e-5)", hidden_first=True),
    # Kimi K3: shared_head.norm(h, residual) returns (normed, sum); the sum is fed back
    "kimi_k3": Family(False, 1e-6, "vllm 0.33.0 models/kimi_k3/nvidia/mtp.py (\"pre-norm "
                      "recurrent state\")", recycles_pre_norm=True),
    # Step-3.5: V3's glue, zero-centred norms, the pre-norm sum chained on purpose
    "step3p5": Family(False, 1e-5, "vllm 0.33.0 step3p5_mtp.py; sglang 0.5.23 step3p5_mtp.py "
                      "(\"standard Step-3.5 Flash design\")", True, recycles_pre_norm=True),
    # Inkling: input_proj over [hidden_norm(h), embed_norm(backbone_embed_norm(e))], the
    # chain_norm's output to the head and the next depth, logits / logits_mup_width_multiplier
    "inkling": Family(False, 1e-6, "vllm 0.33.0 models/inkling/nvidia/mtp.py, ops/norm.py "
                      "embed_dual_rmsnorm_cat; models/inkling/configs.py (rms_norm_eps 1e-6)",
                      hidden_first=True, embed_pre_norm=True, logits_mup=True),
}

# The RMSNorm weights of the ops (FORMAT.md names; a chain's carry "layer.<l>/")
NORM_WEIGHTS = {"enorm_weight", "hnorm_weight", "shared_head_norm_weight", "block.w_in",
                "block.w_post", "block.attn_norm_w", "block.ffn_norm_w", "target_norm_weight",
                "norm_weight", "main_norm_weight", "kv_norm_w", "embed_pre_norm_weight"}
NORM_OPS = {"rmsnorm", "add_rmsnorm", "mtp_shared_head_rmsnorm"}  # their "weight" is a norm's


def norm_weights(name, op, vals):
    """The input values as family `name`'s norms multiply them: a zero-centred
    row's norm weights become float32(1 + w), the rest are unchanged."""
    if not FAMILIES[name].zero_centred:
        return vals
    out = dict(vals)
    for k, v in vals.items():
        base = k.split("/", 1)[-1]
        if base in NORM_WEIGHTS or (base == "weight" and op in NORM_OPS):
            out[k] = (np.float32(1.0) + np.asarray(v, dtype=np.float32)).astype(np.float64)
    return out


def mhc(name):
    """Whether family `name` carries mHC streams."""
    return FAMILIES[name].mhc


def hidden_first(name):
    """Whether family `name` concatenates the hidden before the embedding."""
    return FAMILIES[name].hidden_first


def recycles_pre_norm(name):
    """Whether family `name` feeds the next step the sum before the final norm."""
    return FAMILIES[name].recycles_pre_norm


def embed_pre_norm(name):
    """Whether family `name` norms the embedding with the target's embed_norm first."""
    return FAMILIES[name].embed_pre_norm


def logits_mup(name):
    """Whether family `name`'s head divides the logits by a logits_mup."""
    return FAMILIES[name].logits_mup
