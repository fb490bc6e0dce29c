"""Run as a script (a fresh process: the Triton interpreter that V4's fused input
norm and shared-head norm need on a CPU is chosen before vLLM loads): the
sweep on `deepseek_v4_amd` with the built MTP layer changed, one VARIANT:

  fused_seam    the amd decoder's fused post/pre seam (`use_fused_mhc` set, as
                with AITER or TileLang mHC): the block returns (f, residual,
                post_mix, res_mix) and the layer applies the last hc_post
                (amd mtp.py gates it on `use_fused_mhc`), mHC still vLLM's
                forward_hip fallbacks; the contract read from the layer is
                then `deferred`
  no_pos0_mask  a copy of the layer whose fused input norm never masks
                position 0 (its kernel given the positions clamped to 1)

Prints the records (path, verdict, cases, diagnoses, and the chain's declared
block_contract) as JSON on the last line. Used by test_vllm_v4.py."""

import json
import os
import sys

VARIANTS = ("fused_seam", "no_pos0_mask")


def _never_masked(self, input_ids, positions, previous_hidden_states, inputs_embeds=None,
                  spec_step_index=0):
    """DeepSeekV4MultiTokenPredictorLayer.forward (vLLM 0.33, amd/mtp.py) with
    the fused input norm's positions clamped to 1: position 0 is never masked."""
    from vllm.models.deepseek_v4.common.ops.fused_mtp_input_rmsnorm import (
        _FUSED_MTP_INPUT_RMSNORM_KERNEL,
    )

    previous_hidden_states = previous_hidden_states.view(-1, self.hc_mult,
                                                         self.config.hidden_size)
    inputs_embeds, previous_hidden_states = _FUSED_MTP_INPUT_RMSNORM_KERNEL(
        inputs_embeds, positions.clamp(min=1), previous_hidden_states, self.enorm.weight.data,
        self.hnorm.weight.data, self.enorm.variance_epsilon, self.hc_mult)
    hidden_states = self.h_proj(previous_hidden_states) + self.e_proj(inputs_embeds).unsqueeze(-2)
    hidden_states, residual, post_mix, res_mix = self.mtp_block(
        positions=positions, x=hidden_states, input_ids=input_ids)
    if self.mtp_block.use_fused_mhc:
        hidden_states = self.mtp_block.hc_post(hidden_states, residual, post_mix, res_mix)
    return hidden_states.flatten(1)


def _fused_seam(construct):
    """tiny_vllm.construct whose built MTP layers' decoders take the fused seam."""
    def build(vcfg, draft_cfg, seed):
        model = construct(vcfg, draft_cfg, seed)
        for layer in model.model.layers.values():
            layer.mtp_block.use_fused_mhc = True
        return model
    return build


def _contract(outdir, dump):
    import h5py

    with h5py.File(os.path.join(outdir, dump)) as f:
        return str(f["cases/chain0"].attrs["block_contract"])


def main(variant, out):
    from broken_layers import layer_forward_replaced
    from mtpcheck import verify
    from mtpcheck.capture import sweep, tiny_vllm, vllm_standins

    vllm_standins.triton_interpreter_rounding()
    if variant == "fused_seam":
        tiny_vllm.construct = _fused_seam(tiny_vllm.construct)
    else:
        tiny_vllm.construct = layer_forward_replaced(
            tiny_vllm.construct, "DeepSeekV4MultiTokenPredictorLayer", _never_masked)
    recs = sweep.sweep(["deepseek_v4_amd"], out, verify.find_binary())
    print(json.dumps([dict({k: r.get(k) for k in ("path", "verdict", "cases", "diagnoses")},
                           block_contract=_contract(out, r["dump"]) if r.get("dump") else None)
                      for r in recs]))


if __name__ == "__main__":
    # only as a script: the test process's vLLM stays as it is
    if len(sys.argv) != 3 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: v4amd_variants.py {%s} OUTDIR" % ",".join(VARIANTS))
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("TRITON_INTERPRET", "1")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main(sys.argv[1], sys.argv[2])
