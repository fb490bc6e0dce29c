"""Run as a script (a fresh process: Triton's interpreter is chosen before vLLM
loads): the sweep on GLM-5-Next with its MTP layer replaced by a copy that
feeds the next step the pre-norm sum (the shape of F1 and of DeepSeek before
vLLM #45895) while the logits keep the post-norm hidden. Prints the records
as JSON. Used by test_vllm_families.py, which also imports its
layer_forward_replaced; v32_broken.py runs V3.2's broken copies the same way."""

import json
import os
import sys
import types


def _pre_norm_fed_forward(self, input_ids, positions, previous_hidden_states,
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


def main(out):
    from mtpcheck.capture import tiny_vllm

    tiny_vllm.construct = layer_forward_replaced(tiny_vllm.construct,
                                                 "Glm5NextMultiTokenPredictorLayer",
                                                 _pre_norm_fed_forward)
    sweep_and_print(["glm5_next"], out)


if __name__ == "__main__":
    # only as a script: imported by a test, the test process's vLLM stays as it is
    interpreter_env()
    main(sys.argv[1])
