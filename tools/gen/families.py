"""The model families as the generator knows them: one row each.

Why this exists: the generator is the independent implementation that the
goldens come from, so it keeps its own table of what varies between
families, written from the engines' code (the sources named in each row),
never read from the C tables in families/. The ops ask a row (`mhc`), never
compare a family's name.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    mhc: bool  # mHC streams: e_proj/h_proj per stream, hc_head, the streams recycled
    eps: float  # the checkpoints' rms_norm_eps, the cases' default
    source: str  # where the row was read


FAMILIES = {
    "deepseek_v3": Family(False, 1e-6, "vllm deepseek_mtp.py; DeepSeek-V3 config.json"),
    "glm": Family(False, 1e-5, "vllm glm4_moe_mtp.py; GLM-4.5 config.json"),
    # GLM-4.7-Flash: DeepSeek V3's layer (enorm, hnorm, eh_proj over
    # [embedding, hidden], the block, the shared head's norm) over an MLA block
    "glm4_moe_lite": Family(False, 1e-5, "vllm 0.33.0 glm4_moe_lite_mtp.py; transformers "
                            "Glm4MoeLiteConfig (rms_norm_eps 1e-5)"),
    "deepseek_v4": Family(True, 1e-6, "vllm deepseek_v4/nvidia/mtp.py; DeepSeek-V4 config.json"),
}


def mhc(name):
    """Whether family `name` carries mHC streams."""
    return FAMILIES[name].mhc
