"""Run as a script (a fresh process: Triton's interpreter is chosen before vLLM
loads): the sweep on one family whose MTP layer is replaced by a deliberately
broken copy, each the shape of the bug its family's row names. Prints the
records as JSON. Used by test_vllm_families.py, which also imports its
layer_forward_replaced; v32_broken.py and v4amd_variants.py run their broken
copies the same way (interpreter_env, sweep_and_print).

    python broken_layers.py FAMILY[,FAMILY...] OUTDIR

* glm5_next: the next step fed the pre-norm sum (the shape of F1 and of
  DeepSeek before vLLM #45895) while the logits keep the post-norm hidden:
  PRE_NORM_RECYCLE on GLM-5-Next's post-norm contract.
* kimi_k3: the next step fed the post-norm hidden, where Kimi K3's contract
  feeds the pre-norm sum: POST_NORM_RECYCLE (its mirror).
* minimax_m3, minimax_m3_amd: the other way round, vLLM's layer is the one
  verify names (PRE_NORM_RECYCLE, F17), so the copy is the fix its post-norm
  row implies: the layer returns final_layernorm(h + r) and compute_logits
  applies the head alone (the stand-ins unchanged: they are not the cause).
* deepseek_v4 (SGLang's deepseek_v4_nextn.py, run in the SGLang venv): the
  NextN model's shared_head.norm skipped, hc_head's collapsed hidden going to
  the head unnormed (its Triton mHC kernels, inside the block, need the
  interpreter chosen before SGLang loads: hence a script).
* inkling, inkling_amd: input_proj's halves embedding first where Inkling's are hidden first
  (its row, SPEC.md Step V3-9): CONCAT_ORDER_SWAPPED. inkling/mup_dropped: the logits
  not divided by the mup width multiplier: LOGITS_MUP_DROPPED."""

import json
import os
import sys
import types


def _glm5_next_pre_norm_fed_forward(self, input_ids, positions, previous_hidden_states,
                                    inputs_embeds=None, spec_step_index=0):
    """Glm5NextMultiTokenPredictorLayer.forward (vLLM 0.33) returning
    (post-norm, pre-norm sum) instead of (post-norm, post-norm)."""
    from vllm.models.glm5next.nvidia.ops.fused_eh_norm import fused_eh_norm

    eh_input = fused_eh_norm(positions, inputs_embeds, previous_hidden_states,
                             self.enorm.weight, self.hnorm.weight, self.enorm.variance_epsilon)
    hidden = self.eh_proj(eh_input)
    hidden, residual, _, _ = self.mtp_block(positions=positions, hidden_states=hidden,
                                            residual=None)
    post, _ = self.shared_head.norm(hidden, residual=residual)
    return post, hidden + residual


def _kimi_k3_post_norm_fed_forward(self, input_ids, positions, previous_hidden_states,
                                   inputs_embeds=None, spec_step_index=0):
    """KimiK3MultiTokenPredictorLayer.forward (vLLM 0.33, nvidia, no sequence
    parallelism) returning (post-norm, post-norm) instead of (post-norm,
    pre-norm sum)."""
    from vllm.models.kimi_k3.common.mtp import fused_mtp_input

    hidden = self.eh_proj(fused_mtp_input(positions, inputs_embeds, previous_hidden_states,
                                          self.enorm.weight, self.hnorm.weight,
                                          self.enorm.variance_epsilon))
    hidden, _, residual = self.mtp_block(positions=positions, hidden_states=hidden,
                                         residual=None)
    post, _ = self.shared_head.norm(hidden, residual)
    return post, post


def _minimax_m3_post_norm_returned(self, input_ids, positions, previous_hidden_states,
                                   inputs_embeds=None, spec_step_index=0):
    """MiniMaxM3MultiTokenPredictorLayer.forward (vLLM 0.33, nvidia and amd
    alike) returning final_layernorm(h + r), the post-norm hidden, where vLLM's
    returns the sum h + r; paired with _head_only_logits."""
    import torch

    inputs_embeds = torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)
    inputs_embeds = self.enorm(inputs_embeds)
    previous_hidden_states = self.hnorm(previous_hidden_states)
    hidden_states, _ = self.eh_proj(torch.cat([inputs_embeds, previous_hidden_states], dim=-1))
    hidden_states, residual = self.transformer_layer(positions=positions,
                                                     hidden_states=hidden_states, residual=None)
    hidden_states += residual
    return self.final_layernorm(hidden_states)


def _head_only_logits(self, hidden_states, spec_step_idx=0):
    """MiniMaxM3MTP.compute_logits without its final_layernorm (the layer has
    applied it): the head alone."""
    return self.logits_processor(self.lm_head, hidden_states)


def _inkling_embedding_first(self, input_ids, positions, previous_hidden_states,
                             inputs_embeds=None, spec_step_idx=0):
    """InklingMultiTokenPredictor.forward (vLLM 0.33) with input_proj's halves
    the other way round, [embed_norm(backbone_embed_norm(e)) | hidden_norm(h)]:
    the same norms as modules (their Triton rmsnorm, one rounding each, as the
    fused embed_dual_rmsnorm_cat rounds), concatenated embedding first."""
    import torch

    layer = self.layers[str(spec_step_idx % self.num_mtp_layers)]
    if inputs_embeds is None:
        inputs_embeds = self.backbone_embed_norm(self.embed_tokens.weight[input_ids])
    combined = torch.cat([layer.embed_norm(inputs_embeds),
                          layer.hidden_norm(previous_hidden_states)], dim=-1)
    return self.chain_norm(layer(combined, positions))


def _inkling_logits_undivided(self, hidden_states, spec_step_idx=0):
    """InklingMTP.compute_logits (vLLM 0.33) taking its `not mup` path whatever
    the config says: the plain LogitsProcessor, no division by the mup."""
    return self.logits_processor(self.lm_head, hidden_states)


_INK_SWAPPED = ("InklingMultiTokenPredictor", _inkling_embedding_first)
_M3_FIXED = ("MiniMaxM3MultiTokenPredictorLayer", _minimax_m3_post_norm_returned,
             {"compute_logits": _head_only_logits})
# family -> (the layer class replaced, its broken forward[, the draft model's
# methods replaced with it])
BROKEN = {"glm5_next": ("Glm5NextMultiTokenPredictorLayer", _glm5_next_pre_norm_fed_forward),
          "kimi_k3": ("KimiK3MultiTokenPredictorLayer", _kimi_k3_post_norm_fed_forward),
          "minimax_m3": _M3_FIXED, "minimax_m3_amd": _M3_FIXED, "minimax_m3_2modules": _M3_FIXED,
          "inkling": _INK_SWAPPED, "inkling_amd": _INK_SWAPPED,
          # FAMILY/variant: another broken copy of the family's (the sweep runs FAMILY)
          "inkling/mup_dropped": ("InklingMultiTokenPredictor", None,
                                  {"compute_logits": _inkling_logits_undivided})}


def _sglang_v4_final_norm_dropped():
    """DeepseekV4ModelNextN.forward (SGLang 0.5.23) with its shared_head.norm
    an identity on the instance (its hooks still fire): the head gets
    hc_head's output unnormed; the handed-back streams are unchanged."""
    import functools

    from sglang.srt.models import deepseek_v4_nextn as m

    orig = m.DeepseekV4ModelNextN.forward

    @functools.wraps(orig)  # its signature, which the capture hooks bind
    def forward(self, *args, **kwargs):
        self.shared_head.norm.forward = lambda x: x
        try:
            return orig(self, *args, **kwargs)
        finally:
            del self.shared_head.norm.forward

    m.DeepseekV4ModelNextN.forward = forward


# SGLang sweep family -> the function installing its broken copy
BROKEN_SGLANG = {"deepseek_v4": _sglang_v4_final_norm_dropped}


def sglang_main(families, out):
    """The SGLang sweep's judge_one on each family with its broken copy; prints
    the records' fields as sweep_and_print does."""
    from mtpcheck import verify
    from mtpcheck.capture import sweep_sglang

    recs = []
    for family in families.split(","):
        BROKEN_SGLANG[family]()
        recs.append(sweep_sglang.judge_one(family, out, verify.find_binary()))
    print(json.dumps([{k: r.get(k) for k in ("family", "path", "verdict", "cases", "diagnoses")}
                      for r in recs]))


def layer_forward_replaced(construct, cls_name, forward, model_methods=None):
    """tiny_vllm.construct whose built model's MTP layers of class `cls_name`
    run `forward` instead of their own (a deliberately broken copy), and the
    model holding them `model_methods` (name -> function) instead of its own."""
    def build(vcfg, draft_cfg, seed):
        model = construct(vcfg, draft_cfg, seed)
        replaced = False
        for layer in model.modules():  # the draft's layers (the target has none of them)
            if type(layer).__name__ == cls_name:
                if forward is not None:  # None: the model's methods alone are broken
                    layer.forward = types.MethodType(forward, layer)
                replaced = True
        for name, fn in (model_methods or {}).items() if replaced else ():
            setattr(model, name, types.MethodType(fn, model))
        return model
    return build


def interpreter_env():
    """What the sweep's command sets before vLLM loads (a script's process:
    the Triton interpreter for the layers' input norms)."""
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    from mtpcheck.capture import vllm_standins

    vllm_standins.triton_interpreter_rounding()


def sweep_and_print(families, out):
    """The sweep on `families` as patched by the caller; prints each record's
    family, path, verdict, cases and diagnoses as one JSON line."""
    from mtpcheck import verify
    from mtpcheck.capture import sweep

    recs = sweep.sweep(families, out, verify.find_binary())
    print(json.dumps([{k: r.get(k) for k in ("family", "path", "verdict", "cases", "diagnoses")}
                      for r in recs]))


def main(families, out):
    """FAMILIES: one family, or several joined by commas, each run with its
    broken copy (one process: the MiniMax M3 builds share theirs)."""
    from mtpcheck.capture import tiny_vllm

    families = families.split(",")
    for entry in {id(BROKEN[f]): BROKEN[f] for f in families}.values():
        tiny_vllm.construct = layer_forward_replaced(tiny_vllm.construct, *entry)
    sweep_and_print([f.split("/")[0] for f in families], out)


if __name__ == "__main__":
    # only as a script: imported by a test, the test process's vLLM stays as it is
    interpreter_env()
    if sys.argv[1].split(",")[0] in BROKEN_SGLANG:
        sglang_main(sys.argv[1], sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
