"""DeepSeek V4's NextN layer from SGLang's own code, built and run on a CPU
(the SGLang sweep's `deepseek_v4`, docs/FINDINGS.md S6): what tiny_sglang
sets for it.

Why apart: SGLang's V4 decoder needs two things the other SGLang families do
not, both inside the captured block: its mHC on SGLang's own non-TileLang
path (process-wide switches, tiny_sglang.SETUP) and its MoE replaced while
the family is built (tiny_sglang.SCOPED). vLLM's V4 pieces are in
vllm_standins_v4.py; the dump's V4 attributes are read by the readers both
engines share (specs._v4_attrs, specs._v4_contract)."""

from __future__ import annotations


def cpu_mhc() -> None:
    """DeepSeek V4's mHC on SGLang's own non-TileLang path, inside the block:
    its switches SGLANG_OPT_USE_TILELANG_MHC_{PRE,POST} off (hc_pre's torch
    mixes, hc_post's torch `post_torch_impl`), and `hc_split_sinkhorn` taking
    its Triton port (the branch SGLang takes on gfx1250, where TileLang does
    not compile) instead of the TileLang kernel: `is_gfx1250_supported`
    answered True in that kernel module, whose Triton kernels (the port and
    `mhc_combine`) run under Triton's interpreter (sweep_sglang.main)."""
    from sglang.kernels.ops.layernorm import mhc
    from sglang.srt.environ import envs

    envs.SGLANG_OPT_USE_TILELANG_MHC_PRE.set(False)
    envs.SGLANG_OPT_USE_TILELANG_MHC_POST.set(False)
    mhc.is_gfx1250_supported = lambda: True


def dense_moe() -> list:
    """DeepSeek V4's MoE (deepseek_v2.DeepseekV2MoE, built by its decoder) as
    deepseek_v2's own dense DeepseekV2MLP of the routed experts' width, called
    as the decoder's MoE transport calls the MoE."""
    from sglang.srt.models import deepseek_v2

    class DenseMoE(deepseek_v2.DeepseekV2MLP):
        def __init__(self, config, quant_config=None, prefix="", **unused):
            super().__init__(hidden_size=config.hidden_size,
                             intermediate_size=config.moe_intermediate_size,
                             hidden_act=config.hidden_act, quant_config=quant_config,
                             prefix=prefix, reduce_results=False)
            self.tp_size = 1

        def forward(self, hidden_states, forward_batch=None, **unused):
            return super().forward(hidden_states)

    return [(deepseek_v2, "DeepseekV2MoE", DenseMoE)]
