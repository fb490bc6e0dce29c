"""Run as a script (a fresh process: Triton's interpreter is chosen before vLLM
loads): the sweep on vLLM's DeepSeek V3.2 / GLM-5 MTP layer
(vllm/models/deepseek_v32/{nvidia,amd}/mtp.py) made wrong in one named way,
to show that its PASSED can fail. Prints the records as JSON (one line).
Used by test_vllm_v32.py.

    python v32_broken.py OUT pre_norm FAMILY...   the CUDA layer returns
        (post-norm, the fused add-norm's new residual): the next step is fed
        the pre-norm sum (F1's shape; V3.2's own bug before vLLM #47448)
    python v32_broken.py OUT no_pos0_mask FAMILY...   the fused input-norm
        kernels (fused_embed_eh_norm on CUDA, fused_eh_norm on ROCm), vLLM's own
        Triton code, never see position 0: the embedding of a row at position 0
        is not masked
"""

import sys

from broken_layers import interpreter_env, layer_forward_replaced, sweep_and_print

V32 = "vllm.models.deepseek_v32."


def _pre_norm_fed_forward(self, input_ids, positions, previous_hidden_states,
                          inputs_embeds=None, embed_table=None, spec_step_index=0):
    """DeepseekV32MultiTokenPredictorLayer.forward of the CUDA module (vLLM
    0.33, TP = 1, no sequence parallelism) keeping the second output of
    `fused_allreduce_rms_norm` (the bf16 sum residual + block output) and
    returning it as the recycled hidden."""
    from vllm.models.deepseek_v32.nvidia import mtp

    if embed_table is not None:
        eh_input = mtp.fused_embed_eh_norm(positions, input_ids, embed_table,
                                           previous_hidden_states, self.enorm.weight,
                                           self.hnorm.weight, self.enorm.variance_epsilon)
    else:
        eh_input = mtp.fused_eh_norm(positions, inputs_embeds, previous_hidden_states,
                                     self.enorm.weight, self.hnorm.weight,
                                     self.enorm.variance_epsilon)
    hidden = self.eh_proj(eh_input)
    hidden, residual = self.mtp_block(positions=positions, hidden_states=hidden, residual=None)
    post, pre = mtp.fused_allreduce_rms_norm(hidden, residual, self.shared_head.norm)
    return post, pre


def _positions_hidden(kernel):
    """The kernel called with every position moved off 0 (its only use of the
    positions is the mask `pos == 0`): the mask never fires."""
    def unmasked(positions, *args):
        return kernel(positions + 1, *args)
    return unmasked


def main(out, mutant, families):
    import importlib

    from mtpcheck.capture import tiny_vllm

    if mutant == "pre_norm":
        tiny_vllm.construct = layer_forward_replaced(
            tiny_vllm.construct, "DeepseekV32MultiTokenPredictorLayer", _pre_norm_fed_forward)
    elif mutant == "no_pos0_mask":
        for platform, name in (("nvidia", "fused_embed_eh_norm"), ("amd", "fused_eh_norm")):
            mod = importlib.import_module(V32 + platform + ".mtp")
            setattr(mod, name, _positions_hidden(getattr(mod, name)))
    else:
        raise SystemExit("v32_broken.py: unknown mutant %r" % mutant)
    sweep_and_print(families, out)


if __name__ == "__main__":
    interpreter_env()
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
