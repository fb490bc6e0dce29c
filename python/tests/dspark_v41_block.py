"""The V4.1 DSpark mirror (dspark_v41_mirror.py) with vLLM 0.33's own
`DSparkDeepseekV4Model.forward` as its backbone, for the captured-block hooks
(capture/dspark_block.py): the broadcast of the block's embeddings to hc_mult
streams, the layer loop with its deferred (f, R, post, res, pre) contract,
the final hc_post and hc_collapse with the last layer's pre-mix are vLLM's
code. What cannot run on a CPU is replaced, and said here:
* the decoder layers (TileLang / Triton mHC, sparse MLA, MoE) by
  `StandInLayer`, a black box with `DeepseekV4DecoderLayer`'s call contract:
  it applies the previous layer's deferred hc_post at entry, collapses the
  streams (stream 0 for layer 0, else the carried pre-mix), and returns a
  linear map of that as f with float32 mixes of its own;
* `mhc_post_tilelang` (the final hc_post) by vLLM's own torch reference
  `mhc_post_torch` (kernels/mhc/torch.py), and `hc_collapse_triton` by its
  float32 multiply-and-sum in torch (`collapse_torch`: vLLM has no torch
  version of it), both patched into the dspark module's namespace.
"""

import types

import torch
from torch import nn

import dspark_v41_mirror


def collapse_torch(x, pre_mix):
    """hc_collapse: sum_m f32(pre[t, m]) * f32(x[t, m]) in float32, one
    rounding to x's dtype."""
    return (pre_mix.unsqueeze(-1).float() * x.float()).sum(dim=1).to(x.dtype)


class StandInLayer(nn.Module):
    """A black box with V4.1's decoder-layer call contract."""

    def __init__(self, h, m):
        super().__init__()
        self.m = m
        self.f = nn.Linear(h, h, bias=False, dtype=torch.bfloat16)
        self.mix = nn.Linear(m * h, 2 * m + m * m, bias=False, dtype=torch.float32)

    def forward(self, hidden_states, positions, input_ids, pre_mix, post_mix, res_mix,
                residual, mega_gate_metadata=None):
        from vllm.model_executor.kernels.mhc.torch import mhc_post_torch

        m, t = self.m, hidden_states.shape[0]
        r = hidden_states if residual is None else mhc_post_torch(hidden_states, residual,
                                                                  post_mix, res_mix)
        u = r[:, 0] if pre_mix is None else collapse_torch(r, pre_mix)
        z = self.mix(r.flatten(1).float() / (r.float().abs().mean() + 1))
        post = 2 * torch.sigmoid(z[:, :m]).unsqueeze(-1)
        res = torch.softmax(z[:, m:m + m * m].view(t, m, m), dim=-1)
        pre = torch.sigmoid(z[:, m + m * m:]) + 1e-6
        return self.f(u), r, post, res, pre, None


def build(vcfg, h, v, r, aux_layers, m=4, n_layers=2, seed=1):
    """The mirror drafter with vLLM's V4.1 backbone forward over n_layers
    stand-in layers of hc_mult = m."""
    from vllm.models.deepseek_v41.nvidia import dspark

    dspark.mhc_post_tilelang = __import__(
        "vllm.model_executor.kernels.mhc.torch", fromlist=["mhc_post_torch"]).mhc_post_torch
    dspark.hc_collapse_triton = collapse_torch
    model = dspark_v41_mirror.build(vcfg, h, v, r, aux_layers, seed=seed)
    bb = model.model
    torch.manual_seed(seed + 1)
    bb.layers = nn.ModuleList(StandInLayer(h, m) for _ in range(n_layers))
    bb.hc_mult, bb.use_sequence_parallel, bb.use_native_mega_moe = m, False, False
    bb.embed_input_ids = types.MethodType(dspark.DSparkDeepseekV4Model.embed_input_ids, bb)
    bb.forward = types.MethodType(dspark.DSparkDeepseekV4Model.forward, bb)
    return model.eval()
