"""Run as a script (a fresh process: Triton's interpreter is chosen before vLLM
loads): the sweep on one family whose MTP layer is replaced by a deliberately
broken copy, each the shape of the bug its family's row names. Prints the
records as JSON. Used by test_vllm_families.py, which also imports its
layer_forward_replaced; v32_broken.py and v4amd_variants.py run their broken
copies the same way (interpreter_env, sweep_and_print).

    python broken_layers.py FAMILY OUTDIR

* glm5_next: the next step fed the pre-norm sum (the shape of F1 and of
  DeepSeek before vLLM #45895) while the logits keep the post-norm hidden:
  PRE_NORM_RECYCLE on GLM-5-Next's post-norm contract.
* kimi_k3: the next step fed the post-norm hidden, where Kimi K3's contract
  feeds the pre-norm sum: POST_NORM_RECYCLE (its mirror)."""

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


# family -> (the layer class replaced, its broken forward)
BROKEN = {"glm5_next": ("Glm5NextMultiTokenPredictorLayer", _glm5_next_pre_norm_fed_forward),
          "kimi_k3": ("KimiK3MultiTokenPredictorLayer", _kimi_k3_post_norm_fed_forward)}


def layer_forward_replaced(construct, cls_name, forward):
    """tiny_vllm.construct whose built model's MTP layers of class `cls_name`
    run `forward` instead of their own (a deliberately broken copy)."""
    def build(vcfg, draft_cfg, seed):
        model = construct(vcfg, draft_cfg, seed)
        for layer in model.modules():  # the draft's layers (the target has none of them)
            if type(layer).__name__ == cls_name:
                layer.forward = types.MethodType(forward, layer)
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


def main(family, out):
    from mtpcheck.capture import tiny_vllm

    tiny_vllm.construct = layer_forward_replaced(tiny_vllm.construct, *BROKEN[family])
    sweep_and_print([family], out)


if __name__ == "__main__":
    # only as a script: imported by a test, the test process's vLLM stays as it is
    interpreter_env()
    main(sys.argv[1], sys.argv[2])
