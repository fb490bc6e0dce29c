"""A small torch module tree mirroring vLLM 0.33's DeepSeek V3.2 MTP model
(vllm/models/deepseek_v32/nvidia/mtp.py): the class names, attribute names and
call contract the capture hooks rely on (VLLM_V32 in mtpcheck.capture.specs).
vLLM's own V3.2 classes cannot be built on CPU (sparse attention, Triton
kernels), so the V3.2 hooks are tested on this mirror.

What is mirrored:

* DeepseekV32MTP.forward(input_ids, positions, hidden_states, ...) ->
  DeepseekV32MultiTokenPredictor.forward, which passes the embedding table
  (`embed_table`, a replicated table) or the gathered `inputs_embeds` to
  layers[str(mtp_start_layer_idx + step % L)] positionally:
  (input_ids, positions, previous_hidden_states, inputs_embeds, embed_table,
  spec_step_index);
* the layer: fused_eh_norm / fused_embed_eh_norm (position-0 mask, enorm and
  hnorm with enorm's eps, one rounding per element: SPEC.md 2.2), `eh_proj`,
  `mtp_block(positions=, hidden_states=, residual=None)` returning
  (hidden, residual), the final add fused with shared_head.norm
  (fused_allreduce_rms_norm at TP = 1: the norm of the fp32 sum), returning
  (h_post, h_post);
* compute_logits: logits_processor(shared_head.head, hidden) with no second
  norm; LogitsProcessor.forward(lm_head, hidden_states) in the activations'
  dtype;
* the draft config's architectures, ["DeepseekV32MTPModel"], which vLLM's
  proposer (model_returns_tuple) reads to unpack the tuple.

The decoder block is a linear stand-in (mirrors.SyntheticBlock): the capture
treats it as a black box.
"""

import types

import torch
import torch.nn.functional as F
from torch import nn

from mirrors import BF16, SyntheticBlock

ARCHITECTURES = ["DeepseekV32MTPModel"]
# vLLM 0.33 SpecDecodeBaseProposer.model_returns_tuple(), method "mtp": the
# architectures whose draft model returns (logits hidden, recycled hidden)
TUPLE_ARCHITECTURES = {"DeepSeekMTPModel", "DeepseekV32MTPModel", "Glm5NextMTPModel",
                       "KimiK3MTPModel"}


def _fused_norm(x, w, eps):
    """SPEC.md 2.2: y = bf16(x * rsqrt(v + eps) * w), one rounding."""
    s = x.float()
    return (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(BF16)


def fused_eh_norm(positions, inputs_embeds, previous_hidden, enorm_w, hnorm_w, eps):
    """cat([enorm(masked embeds), hnorm(prev_hidden)]) -> [N, 2H] (common/kernels.py)."""
    e = torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)
    return torch.cat((_fused_norm(e, enorm_w, eps), _fused_norm(previous_hidden, hnorm_w, eps)),
                     -1)


def fused_embed_eh_norm(positions, input_ids, embed_table, previous_hidden, enorm_w, hnorm_w, eps):
    """fused_eh_norm with the embedding gather folded in (a replicated table)."""
    return fused_eh_norm(positions, embed_table[input_ids], previous_hidden, enorm_w, hnorm_w, eps)


class RMSNorm(nn.Module):
    """vLLM's RMSNorm as the V3.2 layer uses it: its weight and
    variance_epsilon read by the fused kernels; with a residual, the add fused
    with the norm of the fp32 sum, returning (normed, bf16 sum)."""

    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h, dtype=BF16))
        self.variance_epsilon = eps

    def forward(self, x, residual=None):
        s = x.float() if residual is None else x.float() + residual.float()
        out = _fused_norm(s, self.weight, self.variance_epsilon)
        return out if residual is None else (out, s.to(BF16))


def fused_allreduce_rms_norm(hidden_states, residual, norm):
    """models/common/ops/fused_allreduce_rms_norm.py at TP = 1: norm(hidden, residual)."""
    return norm(hidden_states, residual)


class DeepseekV32MultiTokenPredictorLayer(nn.Module):
    def __init__(self, h, v, f, eps=1e-6, pre_norm_recycle=False):
        super().__init__()
        self.enorm = RMSNorm(h, eps)
        self.hnorm = RMSNorm(h, eps)
        self.eh_proj = nn.Linear(2 * h, h, bias=False, dtype=BF16)
        self.shared_head = nn.Module()
        self.shared_head.norm = RMSNorm(h, eps)
        self.shared_head.head = nn.Linear(h, v, bias=False, dtype=BF16)
        self.mtp_block = SyntheticBlock(h, f)
        self.pre_norm_recycle = pre_norm_recycle  # a deliberate bug, for the tests

    def forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None,
                embed_table=None, spec_step_index=0):
        if embed_table is not None:
            eh_input = fused_embed_eh_norm(positions, input_ids, embed_table,
                                           previous_hidden_states, self.enorm.weight,
                                           self.hnorm.weight, self.enorm.variance_epsilon)
        else:
            assert inputs_embeds is not None
            eh_input = fused_eh_norm(positions, inputs_embeds, previous_hidden_states,
                                     self.enorm.weight, self.hnorm.weight,
                                     self.enorm.variance_epsilon)
        hidden_states = self.eh_proj(eh_input)
        hidden_states, residual = self.mtp_block(positions=positions, hidden_states=hidden_states,
                                                 residual=None)
        hidden_states, h_pre = fused_allreduce_rms_norm(hidden_states, residual,
                                                        self.shared_head.norm)
        if self.pre_norm_recycle:  # logits from h_post, h_pre fed forward
            return hidden_states, h_pre
        return hidden_states, hidden_states


class LogitsProcessor(nn.Module):
    """vLLM's LogitsProcessor call: (lm_head, hidden_states) -> logits in the
    activations' dtype."""

    def forward(self, lm_head, hidden_states, embedding_bias=None):
        return F.linear(hidden_states, lm_head.weight)


class DeepseekV32MultiTokenPredictor(nn.Module):
    def __init__(self, h, v, f, eps=1e-6, start=61, num_layers=1, replicated_embed=True,
                 pre_norm_recycle=False):
        super().__init__()
        self.mtp_start_layer_idx = start
        self.num_mtp_layers = num_layers
        self.layers = nn.ModuleDict({
            str(i): DeepseekV32MultiTokenPredictorLayer(h, v, f, eps, pre_norm_recycle)
            for i in range(start, start + num_layers)})
        self.embed_tokens = nn.Embedding(v, h, dtype=BF16)
        self.replicated_embed = replicated_embed
        self.logits_processor = LogitsProcessor()

    def forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None,
                spec_step_idx=0):
        embed_table = None
        if inputs_embeds is None:
            if self.replicated_embed:
                embed_table = self.embed_tokens.weight
            else:
                inputs_embeds = self.embed_tokens(input_ids)
        step = spec_step_idx % self.num_mtp_layers
        return self.layers[str(self.mtp_start_layer_idx + step)](
            input_ids, positions, previous_hidden_states, inputs_embeds, embed_table, step)

    def compute_logits(self, hidden_states, spec_step_idx=0):
        layer = self.layers[str(self.mtp_start_layer_idx + spec_step_idx % self.num_mtp_layers)]
        return self.logits_processor(layer.shared_head.head, hidden_states)


class DeepseekV32MTP(nn.Module):
    def __init__(self, h, v, f, eps=1e-6, **kwargs):
        super().__init__()
        self.config = types.SimpleNamespace(architectures=list(ARCHITECTURES),
                                            model_type="deepseek_mtp", hidden_size=h,
                                            vocab_size=v, rms_norm_eps=eps)
        self.model = DeepseekV32MultiTokenPredictor(h, v, f, eps, **kwargs)

    def forward(self, input_ids, positions, hidden_states, intermediate_tensors=None,
                inputs_embeds=None, spec_step_idx=0):
        return self.model(input_ids, positions, hidden_states, inputs_embeds, spec_step_idx)

    def compute_logits(self, hidden_states, spec_step_idx=0):
        return self.model.compute_logits(hidden_states, spec_step_idx)


def returns_tuple(model):
    """vLLM's proposer rule on the model's config: vLLM's own code where vLLM
    is installed, else the same set copied from vLLM 0.33."""
    from mtpcheck.capture.vllm import returns_tuple_rule

    rule = returns_tuple_rule(model)
    if rule is None:
        rule = bool(TUPLE_ARCHITECTURES.intersection(model.config.architectures))
    return rule


def draft(model, input_ids, positions, target_hidden, steps):
    """The legacy proposer's loop (llm_base_proposer.propose): the model's
    return value unpacked by model_returns_tuple(), logits from the first
    element, the second fed forward, greedy tokens, positions + 1; no
    spec_step_idx passed (docs/FINDINGS.md)."""
    tuple_rule = returns_tuple(model)
    hidden, tokens = target_hidden, []
    with torch.no_grad():
        for _ in range(steps):
            ret = model(input_ids=input_ids, positions=positions, hidden_states=hidden)
            last_hidden, hidden = ret if tuple_rule else (ret, ret)
            input_ids = model.compute_logits(last_hidden).argmax(-1)
            tokens.append(input_ids)
            positions = positions + 1
    return tokens
