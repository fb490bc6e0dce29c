"""`python -m mtpcheck.capture sweep --engine sglang`: SGLang's NextN/MTP
draft families, built from SGLang's own classes (tiny_sglang), drafted by
SGLang's own speculative worker loop and judged by `mtpcheck verify`.

Why: SGLang ships its own NextN layers (not vLLM's), and its own draft loop:
what the next draft step receives is whatever the `LogitsProcessor` hands back
as `hidden_states` (the hidden it was given, or `hidden_states_before_norm`
when the model passes one), and which worker runs the loop is SGLang's
`create_worker` decision. The sweep asks that function which worker the
server arguments select, runs step 0 as the worker's draft extend does (the
target's hidden in `spec_info`, top-1 of the logits, the logits output's
`hidden_states` kept), then the worker's own `draft_forward` for the other
steps, bound to a stand-in holding the few fields it reads (no ModelRunner,
KV pool or attention backend on a CPU: tiny_sglang says what is stubbed).
Records have vLLM's schema (sweep.py); `--check FILE` compares them with
docs/findings/sglang-0.5.23.json. Nothing here declares a verdict."""
from __future__ import annotations

import argparse
import os
import sys
import types
from typing import TYPE_CHECKING, Any

from . import sweep as common

if TYPE_CHECKING:
    import torch

K, T = common.K, common.T
# sweep family -> (tiny model type, mtpcheck family row, the engine source)
FAMILIES = {
    "deepseek_v3": ("deepseek_v3", "deepseek_v3", "sglang/srt/models/deepseek_nextn.py"),
    "glm4_moe": ("glm4_moe", "glm", "sglang/srt/models/glm4_moe_nextn.py"),
    # GLM-5 (glm_moe_dsa): GlmMoeDsaForCausalLMNextN subclasses DeepSeek's NextN model
    "glm_moe_dsa": ("glm_moe_dsa", "deepseek_v3", "sglang/srt/models/glm4_moe.py"),
    # DeepSeek V3.2 (deepseek_v32): its draft renamed to DeepSeek V3's NextN class
    # (ModelConfig), over the DSA decoder
    "deepseek_v32": ("deepseek_v32", "deepseek_v3", "sglang/srt/models/deepseek_nextn.py"),
    "glm4_moe_lite": ("glm4_moe_lite", "glm4_moe_lite", "sglang/srt/models/glm4_moe_lite_nextn.py"),
    "glm_ocr": ("glm_ocr", "glm", "sglang/srt/models/glm_ocr_nextn.py"),
    "hy_v3": ("hy_v3", "deepseek_v3", "sglang/srt/models/hunyuan_v3_nextn.py"),
    # Qwen3-MoE MTP: the draft model is the layer (fc over [pre_fc_norm_embedding e,
    # pre_fc_norm_hidden h], one decoder layer, model.norm, lm_head): V3's math
    "qwen3_moe": ("qwen3_moe", "deepseek_v3", "sglang/srt/models/qwen3_moe_mtp.py"),
    "exaone_moe": ("exaone_moe", "deepseek_v3", "sglang/srt/models/exaone_moe_mtp.py"),
    # Qwen3-Next / Qwen3.5: Qwen3-MoE's fc glue with zero-centred (GemmaRMSNorm) norms
    "qwen3_next": ("qwen3_next", "qwen3_next", "sglang/srt/models/qwen3_next_mtp.py"),
    "qwen3_5": ("qwen3_5_text", "qwen3_next", "sglang/srt/models/qwen3_5_mtp.py"),
    # LongCat-Flash: V3's glue, the final norm the model's own `final_layernorm`
    "longcat_flash": ("longcat_flash", "deepseek_v3", "sglang/srt/models/longcat_flash_nextn.py"),
    # MiMo-7B: input_proj over [hidden, embedding], hidden first (the mimo row)
    "mimo": ("mimo", "mimo", "sglang/srt/models/mimo_mtp.py"),
    # ERNIE 4.5: V3's glue; its contract's final norm is the target's (FastDeploy)
    "ernie": ("ernie4_5_moe", "deepseek_v3", "sglang/srt/models/ernie4_eagle.py"),
    # Step-3.5: SGLang's create_worker picks the multi-layer worker (sglang_multi),
    # one MTP layer a step, the pre-norm sum chained (the step3p5 row)
    "step3p5": ("step3p5", "step3p5", "sglang/srt/models/step3p5_mtp.py"),
    # GigaChat 3.5: DeepSeek NextN's shape, one head a step, chained (multi-layer worker)
    "gigachat3_5": ("gigachat3_5", "deepseek_v3", "sglang/srt/models/gigachat35_mtp.py"),
    # MiMo-V2: NextN's glue, final_layernorm in the layer, one layer a step, not chained
    "mimo_v2": ("mimo_v2", "deepseek_v3", "sglang/srt/models/mimo_v2_nextn.py"),
    # HY V4: HY V3's NextN glue (no iHC in the MTP layer; the target has it)
    "hy_v4": ("hy_v4", "deepseek_v3", "sglang/srt/models/hunyuan_v4_nextn.py"),
    # Nemotron-H: the MTP block a pattern of sublayers ("*E"), the first
    # fusing eh_proj over [enorm e, hnorm h], the last folding the residual
    # and norming (final_layernorm); read at its sub-modules (block_taps)
    "nemotron_h": ("nemotron_h", "deepseek_v3", "sglang/srt/models/nemotron_h_mtp.py"),
    # GLM-5-Next and Dots3: DeepSeek NextN's glue (GLM-5-Next's is DeepSeek's
    # own model over its text config; Dots3's its one full-sharing head)
    "glm5_next": ("glm5_next", "deepseek_v3", "sglang/srt/models/glm5_next_nextn.py"),
    "dots3_note": ("dots3_note", "deepseek_v3", "sglang/srt/models/dots3_nextn.py"),
    # Bailing V2.5 (Ring-2.5, hybrid linear attention): the NextN layer is a
    # softmax-attention one; the final add-norm its own final_layernorm
    "bailing_hybrid": ("bailing_hybrid", "deepseek_v3", "sglang/srt/models/bailing_moe_nextn.py"),
    # Bailing V3 (KDA target): the same NextN model, its decoder from bailing_moe_v3
    "bailing_v3": ("bailing_v3", "deepseek_v3", "sglang/srt/models/bailing_moe_nextn.py"),
    # Bailing MoE V2 (Ling 2.0): the same NextN model over a BailingMoEBlock
    "bailing_moe_v2": ("bailing_moe_v2", "deepseek_v3", "sglang/srt/models/bailing_moe_nextn.py"),
    # IQuest Q1: a draft checkpoint of its own; NextN's glue around a block that
    # adds its residual itself, final_layernorm of its sum (fused-rounding norms)
    "iquest_q1": ("iquest_q1", "deepseek_v3", "sglang/srt/models/iquest_q1_mtp.py"),
    # DeepSeek V4: e_proj/h_proj over the mHC streams, a block applying its last
    # hc_post itself off CUDA (internal), hc_head and shared_head.norm in the
    # model, the pre-hc_head streams handed back (hidden_states_before_norm)
    "deepseek_v4": ("deepseek_v4", "deepseek_v4", "sglang/srt/models/deepseek_v4_nextn.py"),
}
ENGINE = "sglang"


def _version():
    import sglang

    return getattr(sglang, "__version__", "?")


def _runner(model, config):
    """What the worker calls as `draft_runner`: forward(batch) returns an
    object with `logits_output`, as ModelRunner.forward does, by calling the
    model as ModelRunner.forward_decode does."""
    def forward(fb):
        return types.SimpleNamespace(
            logits_output=model(fb.input_ids, fb.positions, fb))
    return types.SimpleNamespace(forward=forward, canary_manager=None,
                                 model_config=types.SimpleNamespace(hf_config=config,
                                                                    model_is_mrope=False))


def _worker_stub(runner, steps, n):
    """The fields of the worker that `draft_forward` reads, for top-1 chains
    without hot-token maps, DSA top-k sharing or rejection sampling."""
    import torch

    return types.SimpleNamespace(
        hot_token_id=None, topk=1, speculative_num_steps=steps,
        speculative_num_draft_tokens=steps + 1, draft_runner=runner,
        draft_attn_backend=types.SimpleNamespace(attn_backends=[None] * steps),
        index_share_for_mtp_iteration=False, seed_dsa_topk_from_draft_extend=False,
        _topk1_parents_prealloc=torch.zeros(n, steps, dtype=torch.long),
        _topk1_score_indices_prealloc=torch.zeros(n, steps, dtype=torch.long))


def draft_worker_class(worker_cls: type) -> type:
    """The class whose `draft_forward` the worker's draft loop runs: the one
    class of the worker's module defining it (EAGLEWorkerV2 -> EagleDraftWorker,
    MultiLayerEagleWorkerV2 -> MultiLayerEagleDraftWorker)."""
    mod = sys.modules[worker_cls.__module__]
    found = [c for c in vars(mod).values()
             if isinstance(c, type) and c.__module__ == mod.__name__ and "draft_forward" in vars(c)]
    if len(found) != 1:
        raise RuntimeError("%s: %d classes define draft_forward" % (mod.__name__, len(found)))
    return found[0]


def draft(model: torch.nn.Module, worker_cls: type, config: Any, ids: torch.Tensor,
          pos: torch.Tensor, hidden: torch.Tensor, steps: int) -> Any:
    """Step 0 as the worker's draft extend runs it, then the worker's own
    `draft_forward` for steps 1..steps-1; returns the drafted tokens."""
    import torch
    from sglang.srt.model_executor.forward_context import ForwardContext, forward_context
    from sglang.srt.speculative.eagle_info import EagleDraftInput
    from sglang.srt.speculative.spec_utils import fast_topk

    from .tiny_sglang import forward_batch

    runner = _runner(model, config)
    n = ids.shape[0]
    with torch.no_grad():
        fb = forward_batch(ids, pos, hidden)
        with forward_context(ForwardContext(attn_backend=None), forward_batch=fb):
            out = runner.forward(fb).logits_output
        # _draft_extend_for_prefill: top-k of the probabilities, the logits
        # output's hidden_states kept for the next step
        topk_p, topk_index = fast_topk(torch.softmax(out.next_token_logits.float(), -1), 1, dim=-1)
        fb = forward_batch(topk_index.flatten(), pos + 1, out.hidden_states)
        fb.spec_info = EagleDraftInput(topk_p=topk_p, topk_index=topk_index,
                                       hidden_states=out.hidden_states,
                                       capture_hidden_mode=fb.capture_hidden_mode,
                                       num_tokens_per_req=1, num_tokens_for_logprob_per_req=1)
        fb.out_cache_loc = torch.arange(n * steps)
        stub = _worker_stub(runner, steps, n)
        return draft_worker_class(worker_cls).draft_forward(stub, fb)


def target_handoff(family: str, built: tuple) -> tuple:
    """(what the tiny target hands draft step 0, None), measured from SGLang's
    own target class (tiny_sglang.target_handoff), or (None, why not)."""
    from . import tiny_sglang

    if common.mhc_row(FAMILIES[family][1]):
        return None, common.MHC_HANDOFF
    try:
        model_type = FAMILIES[family][0]
        target = tiny_sglang.build_target(model_type, built[1])
        norm = tiny_sglang.target_norm(target, model_type)
        # the target's final norm, for a draft layer whose contract norms with
        # it (ERNIE: SGLANG_ERNIE's shared_head_norm_weight); not a sub-module
        object.__setattr__(built[0], "mtpcheck_target_norm", norm)
        tids = common.gen_ids(common.torch_generator(5), tiny_sglang.V)
        return tiny_sglang.target_handoff(target, tids, common.row_positions(), model_type), None
    except Exception as e:  # noqa: BLE001 (the chain is still judged, fed a random hidden)
        return None, _why(e)


def _capture_one(family, built, worker_cls, outdir, handoff=None):
    import torch

    from .. import capture
    from . import sglang_multi, tiny_sglang

    model, args, mc = built
    path = os.path.join(outdir, "%s.sglang.h5" % family)
    draft_cls = draft_worker_class(worker_cls)  # a setup error if not found, not the engine's
    # a worker whose every step runs on its own runner: one draft model (one
    # MTP layer, SGLang's draft_model_idx s) a step, hooked together
    models = (tiny_sglang.step_models(model, mc, K)
              if sglang_multi.runner_per_step(draft_cls) else None)
    root = model if models is None else torch.nn.ModuleList(models)
    cap = capture.install(engine=ENGINE, path=path, steps=K, model=root)
    cap.engine_info["notes"].append("speculative worker %s" % worker_cls.__name__)
    gen = torch.Generator().manual_seed(11)
    ids = common.gen_ids(gen, tiny_sglang.V)
    pos = common.row_positions()
    # the width of the hidden step 0 is fed: H, or an mHC row's M·H streams
    width = tiny_sglang.H * (mc.hf_config.hc_mult if common.mhc_row(FAMILIES[family][1]) else 1)
    hidden = common.step0_hidden(cap, handoff, gen, width)
    try:
        try:
            if models is None:
                draft(model, worker_cls, mc.hf_config, ids, pos, hidden, K)
            else:
                _out, cap.recycles = sglang_multi.draft(models, worker_cls, args, mc.hf_config,
                                                        ids, pos, hidden)
                cap.engine_info["notes"].append(
                    "one draft model a step (its runner), at the target's positions; "
                    + ("each step fed the previous one's handed-back hidden (chained)"
                       if cap.recycles else "each step fed the target's hidden (not chained): "
                       "no recycled hidden observed"))
        except Exception as e:  # the engine's own draft step raised: a finding
            raise common.EngineError(_why(e)) from e
        cap.write()
    finally:
        cap.remove()
    return path


def _why(e):
    """One line: the exception and the innermost SGLang line that raised it."""
    import traceback

    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        i = frame.filename.find("/sglang/")
        if i >= 0:
            where = " (at %s:%d)" % (frame.filename[i + 1:], frame.lineno)
    return "%s: %s%s" % (type(e).__name__, common._line(e), where)


def _draft_name(worker):
    try:
        return draft_worker_class(worker).__name__
    except Exception:  # noqa: BLE001 -- a worker without a draft class is named ?
        return "?"


def _record(family, **kw):
    _mt, row, source = FAMILIES[family]
    rec = {"engine": ENGINE, "version": _version(), "family": family, "row": row,
           "source": source, "architecture": None, "path": "-", "cases": {}, "diagnoses": [],
           "repro": "python -m mtpcheck.capture sweep --engine sglang --family %s --out DIR"
                    % family}
    rec.update(kw)
    return rec


def judge_one(family: str, outdir: str, binary: str) -> dict:
    """Builds, captures and verifies one family; a family that does not build
    or whose step raises is a record saying why."""
    from . import tiny_sglang

    try:
        built = tiny_sglang.build(FAMILIES[family][0], os.path.join(outdir, "models"), steps=K)
        worker = tiny_sglang.worker_class(built[1])
    except Exception as e:  # noqa: BLE001 -- a family that does not build is a record, not an abort
        return _record(family, verdict="NOT_RUN", why="not built: " + _why(e))
    rec = _record(family, architecture=built[2].hf_config.architectures[0],
                  path="%s/%s" % (worker.__name__, _draft_name(worker)),
                  path_source=worker.__module__.replace(".", "/") + ".py")
    handoff = target_handoff(family, built)
    rec["handoff"] = common.handoff_note(handoff)
    try:
        dump = _capture_one(family, built, worker, outdir, handoff[0])
    except common.EngineError as e:
        rec.update(verdict="ENGINE_ERROR", why=str(e))
        return rec
    except Exception as e:  # noqa: BLE001 -- a step that raises is a NOT_RUN record, not an abort
        rec.update(verdict="NOT_RUN", why="%s: %s" % (type(e).__name__, common._line(e)))
        return rec
    rec.update(common.verdict_of(dump, binary))
    return rec


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mtpcheck.capture sweep --engine sglang",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=(ENGINE,), default=ENGINE)
    p.add_argument("--family", action="append", choices=sorted(FAMILIES),
                   help="one family (repeatable; default: all of %s)" % ", ".join(FAMILIES))
    p.add_argument("--out", help="folder for the dumps, findings.json, findings.md (required)")
    p.add_argument("--check", default=None,
                   help="compare with this committed findings file; exit 1 on a difference")
    p.add_argument("--list", action="store_true", help="print the families and exit")
    a = p.parse_args(argv)
    if a.list:
        for name, (mt, row, src) in FAMILIES.items():
            print("%-14s row %-14s model_type %-14s %s" % (name, row, mt, src))
        return 0
    if a.out is None:
        p.error("--out DIR is required")
    # DeepSeek V4's mHC Triton kernels (inside its block: tiny_sglang._v4_cpu_mhc)
    # run on a CPU only under Triton's interpreter, chosen before SGLang imports
    # Triton; its bf16 stores rounded to nearest even, as a GPU's
    os.environ.setdefault("TRITON_INTERPRET", "1")
    if os.environ["TRITON_INTERPRET"] == "1":
        from .vllm_standins import triton_interpreter_rounding

        triton_interpreter_rounding()
    from .. import verify

    binary = verify.find_binary()
    if binary is None:
        print("mtpcheck.capture sweep: no mtpcheck binary (set MTPCHECK_BIN)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    records = [judge_one(f, a.out, binary) for f in (a.family or list(FAMILIES))]
    return common.write_findings(a.out, {"engine": ENGINE, "version": _version(), "steps": K},
                                 records, a.check)
