"""A module tree with vLLM 0.33's DeepSeek V4.1 DSpark names and call contract,
for the DSpark hooks on the nvidia class's names: its layers need TileLang,
Triton and vllm._C kernels, so they cannot run on a CPU (the amd module's run:
capture/tiny_dspark_v41.py, docs/FINDINGS.md F18). What is vLLM's own here:
`DSparkDeepseekV4ForCausalLM` (every method the speculator calls: forward,
compute_draft_logits with the final norm, markov_embed, markov_bias,
compute_confidence), `DSparkDeepseekV4Model.combine_hidden_states`
(main_norm(main_proj(aux))), the Markov and confidence heads (bias-free,
with the Markov embedding), `ReplicatedLinear`, `RMSNorm`, the LM head and
LogitsProcessor. The stand-in: the mHC decoder layers and `hc_collapse` are
one linear map of the block embedding (the pre-norm head hidden V4.1's
forward returns), and the context-KV insert does nothing."""

import torch
from torch import nn

from mtpcheck.capture.tiny_vllm import after_loading, randomize


def build(vcfg, h, v, r, aux_layers, seed=1):
    """A V4.1-shaped drafter under `vcfg` (any tiny DSpark config: its
    distributed state and dtype are what the vLLM layers need)."""
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.layers.layernorm import RMSNorm
    from vllm.model_executor.layers.linear import ReplicatedLinear
    from vllm.model_executor.layers.logits_processor import LogitsProcessor
    from vllm.model_executor.layers.vocab_parallel_embedding import (
        ParallelLMHead,
        VocabParallelEmbedding,
    )
    from vllm.model_executor.models.qwen3_dspark import DSparkConfidenceHead, DSparkMarkovHead
    from vllm.models.deepseek_v41.nvidia.dspark import (
        DSparkDeepseekV4ForCausalLM,
        DSparkDeepseekV4Model,
    )

    class Backbone(nn.Module):
        """DSparkDeepseekV4Model's attribute names, without its layers."""

        combine_hidden_states = DSparkDeepseekV4Model.combine_hidden_states

        def __init__(self):
            super().__init__()
            self.embed_tokens = VocabParallelEmbedding(v, h, prefix="model.embed_tokens")
            self.main_proj = ReplicatedLinear(h * aux_layers, h, bias=False, return_bias=False,
                                              prefix="model.main_proj")
            self.main_norm = RMSNorm(h, eps=1e-6)
            self.layers_stand_in = nn.Linear(h, h, bias=False)
            self.norm = RMSNorm(h, eps=1e-6)
            self.markov_head = DSparkMarkovHead(v, v, r, prefix="model.markov_head")
            self.confidence_head = DSparkConfidenceHead(h + r, prefix="model.confidence_head")

        def precompute_and_store_context_kv(self, main_x, positions, slots=None):
            pass

        def forward(self, input_ids, positions, inputs_embeds=None):
            return self.layers_stand_in(self.embed_tokens(input_ids))

    class Drafter(DSparkDeepseekV4ForCausalLM):
        def __init__(self):
            nn.Module.__init__(self)
            self.model = Backbone()
            self.lm_head = ParallelLMHead(v, h, prefix="lm_head")
            self.logits_processor = LogitsProcessor(v)

    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(vcfg):
            model = Drafter()
    finally:
        torch.set_default_dtype(torch.float32)
    randomize(model, seed)
    after_loading(model, vcfg, vcfg.speculative_config.draft_model_config)
    return model.eval()
