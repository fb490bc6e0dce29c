"""Small torch module trees mirroring engine MTP modules (their class names,
attribute names and call contracts), for the hooks of engines that do not run
here: SGLang's NextN model and vLLM's DeepSeek V4 MTP layer.  The numerics
follow the rounding points of SPEC.md 10.1 / 2.1 / 2.3 in bf16 torch, so a
dump of a correct mirror passes `mtpcheck verify`."""

import torch
import torch.nn.functional as F
from torch import nn

BF16 = torch.bfloat16


class RMSNorm(nn.Module):
    """Eager RMSNorm (SPEC.md 2.1); with a residual, the fused add + norm
    normalising the fp32 sum (add_norm_input = sum), returning (out, bf16 sum)."""

    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h, dtype=BF16))
        self.variance_epsilon = eps

    def forward(self, x, residual=None):
        s = x.float() if residual is None else x.float() + residual.float()
        y = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)).to(BF16)
        out = y * self.weight
        return out if residual is None else (out, s.to(BF16))


class SyntheticBlock(nn.Module):
    """SPEC.md 10.1: returns (h, r1), the final add left to the caller."""

    def __init__(self, h, f):
        super().__init__()
        self.input_layernorm = RMSNorm(h)
        self.W_a = nn.Linear(h, h, bias=False, dtype=BF16)
        self.post_attention_layernorm = RMSNorm(h)
        self.gate = nn.Linear(h, f, bias=False, dtype=BF16)
        self.up = nn.Linear(h, f, bias=False, dtype=BF16)
        self.down = nn.Linear(f, h, bias=False, dtype=BF16)

    def forward(self, positions, hidden_states, forward_batch=None, residual=None,
                zero_allocator=None):
        a = self.W_a(self.input_layernorm(hidden_states))
        x1, r1 = self.post_attention_layernorm(a, hidden_states)
        g = (F.silu(self.gate(x1).float()) * self.up(x1).float()).to(BF16)
        return self.down(g), r1


def randomize(module, gen, scale=0.3):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("norm.weight") or "norm.weight" in name:
                p.copy_((0.5 + torch.rand(p.shape, generator=gen)).to(p.dtype))
            else:
                p.copy_((torch.randn(p.shape, generator=gen) * scale / p.shape[-1] ** 0.5 * 4)
                        .to(p.dtype))


# ---- SGLang deepseek_nextn.py mirror ------------------------------------------------------
class SpecInfo:
    def __init__(self, hidden_states):
        self.hidden_states = hidden_states


class ForwardBatch:
    def __init__(self, hidden_states):
        self.spec_info = SpecInfo(hidden_states)


class LogitsProcessorOutput:
    def __init__(self, next_token_logits, hidden_states):
        self.next_token_logits = next_token_logits
        self.hidden_states = hidden_states


class LogitsProcessor(nn.Module):
    def forward(self, input_ids, hidden_states, lm_head, forward_batch):
        return LogitsProcessorOutput(F.linear(hidden_states, lm_head.weight), hidden_states)


class DeepseekModelNextN(nn.Module):
    def __init__(self, h, v, f, eps=1e-6):
        super().__init__()
        self.embed_tokens = nn.Embedding(v, h, dtype=BF16)
        self.enorm = RMSNorm(h, eps)
        self.hnorm = RMSNorm(h, eps)
        self.eh_proj = nn.Linear(2 * h, h, bias=False, dtype=BF16)
        self.decoder = SyntheticBlock(h, f)
        self.shared_head = nn.Module()
        self.shared_head.norm = RMSNorm(h, eps)

    def forward(self, input_ids, positions, forward_batch, input_embeds=None):
        hidden = self.embed_tokens(input_ids) if input_embeds is None else input_embeds
        hidden = self.eh_proj(torch.cat((self.enorm(hidden),
                                         self.hnorm(forward_batch.spec_info.hidden_states)), -1))
        hidden, residual = self.decoder(positions, hidden, forward_batch, None, None)
        hidden, self.last_pre_norm = self.shared_head.norm(hidden, residual)  # (h_post, h_pre)
        return hidden


class DeepseekV3ForCausalLMNextN(nn.Module):
    def __init__(self, h, v, f, eps=1e-6):
        super().__init__()
        self.model = DeepseekModelNextN(h, v, f, eps)
        self.lm_head = nn.Module()
        self.lm_head.weight = nn.Parameter(torch.zeros(v, h, dtype=BF16))
        self.logits_processor = LogitsProcessor()

    def forward(self, input_ids, positions, forward_batch):
        hidden = self.model(input_ids, positions, forward_batch)
        return self.logits_processor(input_ids, hidden, self.lm_head, forward_batch)


def sglang_draft(model, ids, positions, target_hidden, steps, pre_norm_recycle=False):
    """The EAGLE worker's draft loop as SGLang runs it for NextN: each step is
    fed the hidden states the logits processor handed back.  With
    `pre_norm_recycle`, a deliberately broken loop: each step is fed the
    previous step's hidden before the final norm (the bug PRE_NORM_RECYCLE)."""
    hidden = target_hidden
    for _ in range(steps):
        out = model(ids, positions, ForwardBatch(hidden))
        ids = out.next_token_logits.float().argmax(-1)
        hidden = model.model.last_pre_norm if pre_norm_recycle else out.hidden_states
        positions = positions + 1
    return ids


# ---- vLLM DeepSeek V4 MTP layer mirror (deepseek_v4/nvidia/mtp.py names) --------------------
def vllm_mhc():
    """vLLM's own mHC torch ops (kernels/mhc/torch.py: the pieces of a V4 step
    that run on CPU), or None where vLLM is not installed."""
    try:
        from vllm.model_executor.kernels.mhc.torch import mhc_post_torch, mhc_pre_torch
    except Exception:  # noqa: BLE001 -- any import failure: no vLLM mHC ops
        return None
    return mhc_pre_torch, mhc_post_torch


def _plain_pre(x, fn, scale, base, *rest):
    """Without vLLM: fixed mixes (mean in, identity comb), same shapes."""
    t, m, _ = x.shape
    u = x.float().mean(1).to(BF16)
    return torch.full((t, m, 1), 2.0 / m), torch.eye(m).expand(t, m, m).contiguous(), u


def hc_post(x, residual, post, comb):
    out = post.reshape(post.shape[0], -1, 1) * x.float().unsqueeze(1) + torch.einsum(
        "tij,tih->tjh", comb.float(), residual.float())
    return out.to(residual.dtype)


class V4Block(nn.Module):
    """Deferred contract (nvidia model.py): returns (f, residual, post_mix,
    res_mix); the layer applies the last hc_post. The sublayers are linear
    stand-ins; the mixing is vLLM's mhc_pre_torch / mhc_post_torch when present."""

    def __init__(self, h, m, f, eps=1e-6):
        super().__init__()
        self.hc_mult, self.eps = m, eps
        k = 2 * m + m * m
        for sub in ("attn", "ffn"):
            setattr(self, "hc_%s_fn" % sub, nn.Parameter(torch.zeros(k, m * h)))
            setattr(self, "hc_%s_scale" % sub, nn.Parameter(torch.ones(3)))
            setattr(self, "hc_%s_base" % sub, nn.Parameter(torch.zeros(k)))
        self.attn = nn.Linear(h, h, bias=False, dtype=BF16)
        self.ffn = nn.Linear(h, h, bias=False, dtype=BF16)
        ops = vllm_mhc()
        self.pre, self.post = ops if ops else (_plain_pre, hc_post)

    def _pre(self, x, sub):
        return self.pre(x, getattr(self, "hc_%s_fn" % sub), getattr(self, "hc_%s_scale" % sub),
                        getattr(self, "hc_%s_base" % sub), self.eps, 1e-6, 1e-6, 2.0, 20)

    def forward(self, x, positions, input_ids=None, post_mix=None, res_mix=None, residual=None):
        post_a, comb_a, u_a = self._pre(x, "attn")
        r1 = self.post(self.attn(u_a), x, post_a, comb_a)
        post_f, comb_f, u_f = self._pre(r1, "ffn")
        return self.ffn(u_f), r1, post_f, comb_f


class DeepSeekV4MultiTokenPredictorLayer(nn.Module):
    def __init__(self, h, v, m, f, eps=1e-6):
        super().__init__()
        self.hc_mult, self.hc_eps, self.rms_norm_eps, self.hc_sinkhorn_iters = m, 1e-6, eps, 20
        self.enorm = RMSNorm(h, eps)
        self.hnorm = RMSNorm(h, eps)
        self.e_proj = nn.Linear(h, h, bias=False, dtype=BF16)
        self.h_proj = nn.Linear(h, h, bias=False, dtype=BF16)
        self.hc_head_fn = nn.Parameter(torch.zeros(m, m * h))
        self.hc_head_base = nn.Parameter(torch.zeros(m))
        self.hc_head_scale = nn.Parameter(torch.ones(1))
        self.shared_head = nn.Module()
        self.shared_head.norm = RMSNorm(h, eps)
        self.shared_head.head = nn.Linear(h, v, bias=False, dtype=BF16)
        self.mtp_block = V4Block(h, m, f)

    def forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None,
                spec_step_idx=0):
        t = previous_hidden_states.shape[0]
        p = previous_hidden_states.view(t, self.hc_mult, -1)
        e = self.enorm(torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds))
        x = self.h_proj(self.hnorm(p)) + self.e_proj(e).unsqueeze(-2)
        f, r1, post, comb = self.mtp_block(x=x, positions=positions, input_ids=input_ids)
        return self.mtp_block.post(f, r1, post, comb).flatten(1)
