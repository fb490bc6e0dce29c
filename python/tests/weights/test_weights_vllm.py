"""The weights capture on vLLM's real loaders (tools/ci/weights.sh): for each
family, vLLM's own load_weights is run over a checkpoint's names on a tiny
MTP model built from vLLM's classes (real attention, MoE MTP block), and the
audit of that real mapping must reach the same findings as the audit
simulated from the same parameter and module lists under the engine's rules
(`--engine vllm@0.33`). The spec's own rules (`--engine spec`) must not."""

import json
import os
import subprocess

import pytest

ENGINE = os.environ.get("MTPCHECK_ENGINE_TESTS") == "1"
try:
    import torch  # noqa: F401
    import vllm
except Exception as e:  # half-installed engines raise more than ImportError
    if ENGINE:
        raise
    pytest.skip("vllm not importable (tools/ci/weights.sh runs these): %s" % e,
                allow_module_level=True)

from mtpcheck import weights, weights_vllm

BIN = os.environ.get("MTPCHECK_BIN", "build/mtpcheck")
FAMILIES = [("deepseek_v3", 61), ("glm", 92)]
# (capture family, N, quantization, built with the CUDA platform's class):
# V3.2 / GLM-5 build with the sparse MLA backend selection relaxed on CPU
CASES = ([(f, n, q, False) for f, n in FAMILIES for q in (None, "fp8")] +
         [("deepseek_v3", 61, "ct-fp8", False), ("glm", 92, "ct-fp8", False)] +
         [("deepseek_v32", 61, q, False) for q in (None, "fp8", "ct-fp8")] +
         [("glm5", 78, q, False) for q in (None, "fp8", "ct-fp8")] +
         [("deepseek_v32", 61, "fp8", True), ("glm5", 78, "fp8", True)] +
         [("deepseek_v4", 43, q, True) for q in (None, "fp8", "fp4", "ct-fp8")] +
         [("deepseek_v4_pro", 61, q, True) for q in (None, "fp8", "fp4")])
V4 = weights_vllm.V4
# vLLM 0.23 (tools/ci/weights.sh, when its venv is cached): every family
# under the 0.23 rules; it has no CUDA V3.2 MTP class (no
# vllm/models/deepseek_v32), GLM-4.5 and V3 are run as before (bf16, FP8)
V023 = vllm.__version__.startswith("0.23")
RULES = ["--engine", "vllm@0.23" if V023 else "vllm@0.33"]
if V023:
    CASES = [c for c in CASES if (c[0] in V4 or not c[3]) and
             (c[0] not in ("glm", "deepseek_v3") or c[2] in (None, "fp8"))]
only_033 = pytest.mark.skipif(V023, reason="vLLM 0.33's loaders (this is vLLM 0.23)")
only_023 = pytest.mark.skipif(not V023, reason="vLLM 0.23's loaders (this is vLLM 0.33)")
IDS = ["%s-%s%s" % (f, q or "bf16", "-cuda" if c else "") for f, _, q, c in CASES]


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    out = {}
    for fam, n, q, cuda in CASES:
        d = tmp_path_factory.mktemp(fam)
        cls = weights_vllm.cuda_mtp_class() if cuda and fam not in V4 else None
        model, _ = weights_vllm.build(weights_vllm.write_config(fam, str(d), q), cls)
        if cuda:  # V4: always the CUDA class (the CPU platform's is a stub)
            assert type(model).__module__.endswith(
                ("deepseek_v32.nvidia.mtp", "deepseek_v4.nvidia.mtp"))
        ts = weights_vllm.checkpoint_tensors(fam, q)
        keys = [k for k, _, _ in ts]
        cap = weights.capture(model, weights.zeros(keys, {k: s for k, _, s in ts},
                                                   dtypes={k: t for k, t, _ in ts}))
        if refuses_wk_scale(fam, q):
            assert cap.error and cap.error.startswith("KeyError: '%s'" % wk_fused(n)), cap.error
        else:
            assert cap.error is None, cap.error
        files = {k: str(d / (k + ".txt")) for k in ("keys", "params", "modules", "map")}
        with open(files["keys"], "w") as f:
            f.writelines(k + "\n" for k in keys)
        cap.write(files["params"], files["modules"], files["map"])
        out[fam, q, cuda] = (n, files, cap, model, d)
    return out


def audit_family(fam):
    return weights_vllm.AUDIT_FAMILY[fam]


def expert_dtype(fam, q):
    """V4 routed-expert scales: fp8 experts' weight_scale_inv, else fp4."""
    return ["--expert-dtype", "fp8"] if fam in V4 and q == "fp8" else []


def refuses_wk_scale(fam, q):
    """vLLM 0.23 on a compressed-tensors V3.2 / GLM-5 checkpoint: its FP8
    indexer wk fold tests "weight_scale_inv" only (deepseek_v2.py
    _try_load_fp8_indexer_wk), so `indexer.wk.weight_scale` goes on to a
    `wk_weights_proj.weight_scale` that does not exist: KeyError at load,
    and the FP8 wk it belongs to waits forever."""
    return V023 and fam in weights_vllm.SPARSE and q == "ct-fp8"


def wk_fused(n):
    return "model.layers.%d.mtp_block.self_attn.indexer.wk_weights_proj.weight_scale" % n


def expected(fam, n, q, checkpoint=False):
    """The findings both audits must reach. vLLM's V4 loaders have no alias
    step: the V4-Flash / Pro layout (top-level head.weight / embed.weight
    only) leaves the MTP head and embedding unloaded (SPEC.md 12.5 #5).
    vLLM 0.23 builds V4's e_proj / h_proj without prefix= (nvidia/mtp.py
    DeepSeekV4MultiTokenPredictorLayer), so under compressed-tensors the
    ignore rule for them misses, they are built FP8, and the checkpoint
    (quantized with them ignored) has no scale for them (12.5 #6). A
    checkpoint folder shows the FP8 wk vLLM 0.23 holds forever (a tensor
    loaded nowhere, refuses_wk_scale)."""
    if fam in V4:
        out = [("MTP_HEAD_EMBED_UNLOADED", "", "model.embed_tokens.weight"),
               ("MTP_HEAD_EMBED_UNLOADED", "", "model.layers.%d.shared_head.head.weight" % n)]
        if V023:
            out += [("EH_PROJ_NO_PREFIX", "model.layers.%d.%s" % (n, m), "") for m in ("e_proj", "h_proj")]
            if q == "ct-fp8":
                out += [("QUANT_SCALE_DROPPED", "", "model.layers.%d.%s.weight_scale" % (n, m))
                        for m in ("e_proj", "h_proj")]
        return sorted(out)
    if refuses_wk_scale(fam, q):
        wk = "model.layers.%d.self_attn.indexer.wk.weight" % n
        return [("STALE_WEIGHT_REMAP", wk, "")] * checkpoint + [
            ("STALE_WEIGHT_REMAP", wk + "_scale", wk_fused(n))]
    return []


def json_path(files, extra, checkpoint=None, modules=True):
    return files["map"] + ".%d.json" % abs(hash(tuple(extra) + (checkpoint, modules)))


def audit(fam, n, files, *extra, checkpoint=None, modules=True, family=None):
    """The findings (code, key, target) of one audit; KEYS, or the
    checkpoint folder's headers; modules=False: the rules' own modules;
    family: another --family than the capture family's."""
    js = json_path(files, extra + ((family,) if family else ()), checkpoint, modules)
    src = ["--checkpoint", checkpoint] if checkpoint else ["--keys", files["keys"]]
    mods = ["--modules", files["modules"]] if modules else []
    args = [BIN, "audit-weights", "--family", family or audit_family(fam), "--layer", str(n)] + src + [
        "--params", files["params"]] + mods + ["--json", js] + RULES + list(extra)
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    assert r.returncode in (0, 1), r.stderr
    with open(js) as f:
        doc = json.load(f)
    version = doc.get("schema_version", "1.0")  # docs/RESULTS.md "Schema version"
    assert int(version.split(".")[0]) <= 2, "%s: schema_version %s is newer than this test reads (2.x)" % (js, version)
    return sorted((x["code"], x["key"], x["target"]) for x in doc["findings"])


def pairs(lines):
    return sorted(tuple(s.rstrip("\n").split("\t")[:2]) for s in lines if s.strip() and not s.startswith("#"))


@pytest.mark.parametrize("fam,n,q,cuda", CASES, ids=IDS)
def test_real_mapping_equals_simulated(captured, fam, n, q, cuda):
    _, files, cap, _, _ = captured[fam, q, cuda]
    if q:  # every FP8 projection's scale is loaded: into a scale, or (the
        # indexer wk, dequantized at load) into the weight with its own
        with open(files["map"]) as f:  # V4 names its scales `.scale`
            rows = [s.split("\t") for s in f if s.split("\t")[0].endswith(
                (".weight_scale_inv", ".weight_scale", ".scale"))]
        assert rows and all("weight_scale" in r[1] or ".indexer.wk." in r[0] for r in rows)
        assert not [k for k in cap.skipped if "scale" in k]
    ed = expert_dtype(fam, q)
    real = audit(fam, n, files, "--mapping", files["map"], *ed)
    sim = audit(fam, n, files, *ed)
    assert real == sim
    # vLLM loads every MTP key of these layouts; V4: not the head/embed
    assert real == expected(fam, n, q)
    if fam in V4:  # the e_proj / h_proj prefixes from the rules alone
        assert audit(fam, n, files, *ed, modules=False) == real
    r = subprocess.run([BIN, "audit-weights", "--family", audit_family(fam), "--layer", str(n),
                        "--keys", files["keys"], "--params", files["params"], "--print-mapping"]
                       + ed + RULES, capture_output=True, text=True, check=True)
    with open(files["map"]) as f:
        assert pairs(r.stdout.splitlines()) == pairs(f)


@only_033
@pytest.mark.parametrize("fam,n", FAMILIES)
def test_spec_rules_disagree_with_the_engine(captured, fam, n):
    """The spec's §6 rules against 0.33's parameters: the false
    STALE_WEIGHT_REMAP findings the engine rules remove."""
    _, files, _, _, _ = captured[fam, None, False]
    spec = audit(fam, n, files, "--engine", "spec")
    assert spec and all(code == "STALE_WEIGHT_REMAP" for code, _, _ in spec)
    assert any(".experts.w13_weight" in t for _, _, t in spec)


@only_033
def test_tampered_mapping_is_named(captured, tmp_path):
    """A mapping that misses the gate bias (a stale remap) is a finding."""
    n, files, _, _, _ = captured["deepseek_v3", None, False]
    with open(files["map"]) as f:
        rows = [s for s in f if "e_score_correction_bias" not in s]
    bad = dict(files, map=str(tmp_path / "bad.txt"))
    with open(bad["map"], "w") as f:
        f.writelines(rows)
    found = audit("deepseek_v3", n, bad, "--mapping", bad["map"])
    assert ("STALE_WEIGHT_REMAP", "",
            "model.layers.61.mtp_block.mlp.gate.e_score_correction_bias") in found or \
        any("e_score_correction_bias" in t for _, _, t in found)


@only_033
def test_glm_embedding_prefix_recorded(captured):
    """Module prefixes are what vLLM built: the MTP shared head's
    quantization prefix is `model.layers.N.head` (SPEC.md 12.5)."""
    _, _, cap, _, _ = captured["glm", None, False]
    mods = dict(cap.modules)
    assert mods["model.layers.92.shared_head.head"] == "model.layers.92.head"


def shard_rows(model, cap):
    """The shape each checkpoint key must have to fit its parameter (TP 1):
    the parameter's own; one expert of a fused [E, ...] one (w13: a half);
    one shard of a stacked one (the module's output_sizes, scaled for a
    block scale)."""
    params = dict(model.named_parameters())
    out = {}
    for key, pname, shard, expert in cap.rows:
        if pname not in params:  # a name the loader refused (KeyError)
            continue
        shape = list(params[pname].shape)
        if expert is not None:
            shape = shape[1:]
            if "w13_" in pname:
                shape[0] //= 2
        elif shard is not None:
            sizes = model.get_submodule(pname.rsplit(".", 1)[0]).output_sizes
            idx = {"q": 0, "k": 1, "v": 2}.get(shard, shard)
            shape[0] = shape[0] * sizes[idx] // sum(sizes)
        out[key] = shape
    return out


def write_checkpoint(d, model, cap, fam, q, drop=()):
    """A two-file safetensors checkpoint with an index, of the captured
    layout: FP8 weights in float8_e4m3fn with their block scales, the
    rest bf16, shapes that fit the parameters; keys in drop left out."""
    import torch
    from safetensors.torch import save_file

    shapes = shard_rows(model, cap)
    dtypes = {k: t for k, t, _ in weights_vllm.checkpoint_tensors(fam, q)}
    block = 8 if q == "ct-fp8" else 16  # weights_vllm.CT_FP8, FP8
    for k in list(shapes):  # an FP8 weight's block scale: ceil of its shape
        w = (k[: -len(".scale")] if k.endswith(".scale") else k.rsplit(".", 1)[0]) + ".weight"
        if (k.endswith(("weight_scale_inv", "weight_scale", ".scale")) and w in shapes
                and dtypes.get(w) == torch.float8_e4m3fn):
            shapes[k] = [-(-d // block) for d in shapes[w]]
    tensors = {k: torch.zeros(shapes.get(k, [1]), dtype=dtypes.get(k, torch.bfloat16))
               for k in dtypes if k not in drop}
    names = sorted(tensors)
    files = {"model-00001-of-00002.safetensors": names[::2],
             "model-00002-of-00002.safetensors": names[1::2]}
    os.makedirs(d, exist_ok=True)
    for f, ks in files.items():
        save_file({k: tensors[k] for k in ks}, os.path.join(d, f))
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0},
                   "weight_map": {k: fn for fn, ks in files.items() for k in ks}}, f)
    return str(d)


CKPT = [c for c in CASES if c[0] != "glm" and (not c[3] or c[0] in V4)]


@pytest.mark.parametrize("fam,n,q,cuda", CKPT, ids=["%s-%s" % (c[0], c[2] or "bf16") for c in CKPT])
def test_checkpoint_folder(captured, fam, n, q, cuda):
    """--checkpoint over real safetensors headers: every MTP tensor into one
    parameter, every parameter from one tensor, FP8 scales with one block
    shape, shapes against the captured parameter shapes; the captured and
    the simulated mappings agree, and both are clean."""
    _, files, cap, model, d = captured[fam, q, cuda]
    ck = write_checkpoint(d / "ckpt", model, cap, fam, q)
    ed = expert_dtype(fam, q)
    real = audit(fam, n, files, "--mapping", files["map"], *ed, checkpoint=ck)
    sim = audit(fam, n, files, *ed, checkpoint=ck)
    assert real == sim == expected(fam, n, q, checkpoint=True)
    r = subprocess.run([BIN, "audit-weights", "--family", audit_family(fam), "--layer", str(n),
                        "--checkpoint", ck, "--params", files["params"]] + ed,
                       capture_output=True, text=True, check=False)
    line = [s for s in r.stdout.splitlines() if s.startswith("audit-weights: checkpoint")]
    assert line and "2 file(s) (indexed)" in line[0], r.stdout
    n_fp8 = int(line[0].split("; ")[1].split()[0])
    n_shapes = int(line[0].split("; ")[2].split()[0])
    assert n_shapes > 20 and (n_fp8 > 5 if q else n_fp8 == 0), line[0]


@only_033
def test_checkpoint_defects_are_named(captured, tmp_path):
    """A dropped FP8 scale and a tensor of the wrong shape are findings."""
    fam, n, q = "deepseek_v32", 61, "fp8"
    _, files, cap, model, _ = captured[fam, q, False]
    gone = "model.layers.61.self_attn.q_b_proj.weight_scale_inv"
    ck = write_checkpoint(tmp_path / "drop", model, cap, fam, q, drop=(gone,))
    found = audit(fam, n, files, checkpoint=ck)
    assert ("QUANT_SCALE_DROPPED", "model.layers.61.self_attn.q_b_proj.weight", "") in found
    bad = dict(files, params=str(tmp_path / "params.txt"))
    with open(files["params"]) as f, open(bad["params"], "w") as g:
        g.writelines(s.replace("enorm.weight\tshape=64", "enorm.weight\tshape=65") for s in f)
    ck = write_checkpoint(tmp_path / "ok", model, cap, fam, q)
    found = audit(fam, n, bad, checkpoint=ck)
    assert found == [("STALE_WEIGHT_REMAP", "model.layers.61.enorm.weight",
                      "model.layers.61.enorm.weight")]


@only_033
def test_glm45_head_loaded_twice(captured, tmp_path):
    """GLM-4.5's layout has both lm_head and the MTP layer's own
    shared_head.head; vLLM 0.33 loads both into the MTP head (the later
    wins): alike in dtype and shape, a note; of another shape, a finding."""
    fam, n = "glm", 92
    _, files, cap, model, _ = captured[fam, None, False]
    ck = write_checkpoint(tmp_path / "glm", model, cap, fam, None)
    assert audit(fam, n, files, "--mapping", files["map"], checkpoint=ck) == []
    with open(json_path(files, ("--mapping", files["map"]), ck)) as f:
        notes = json.load(f)["notes"]
    assert any(s.startswith("2 parameter(s) loaded twice") for s in notes), notes
    head = "model.layers.92.shared_head.head.weight"
    ck = write_checkpoint(tmp_path / "glm2", model, cap, fam, None, drop=(head,))
    import torch
    from safetensors.torch import save_file
    save_file({head: torch.zeros(2, 64, dtype=torch.bfloat16)}, os.path.join(ck, "head.safetensors"))
    index = os.path.join(ck, "model.safetensors.index.json")
    with open(index) as f:
        doc = json.load(f)
    doc["weight_map"][head] = "head.safetensors"
    with open(index, "w") as f:
        json.dump(doc, f)
    found = audit(fam, n, files, "--mapping", files["map"], checkpoint=ck)
    assert ("STALE_WEIGHT_REMAP", head, head) in found or \
        ("STALE_WEIGHT_REMAP", "lm_head.weight", head) in found, found


# GLM-5.x as published: the MTP layer has no shared_head.head / embed_tokens
# of its own (the target's lm_head.weight and model.embed_tokens.weight are
# the only copies); bf16 and FP8, the CPU registry's class and the CUDA one
GLM5_OWN_COPIES = ("model.layers.78.shared_head.head.weight", "model.layers.78.embed_tokens.weight")
GLM5_PUBLISHED = [("glm5", 78, q, c) for q in (None, "fp8") for c in (False, True)]


@only_033
@pytest.mark.parametrize("fam,n,q,cuda", GLM5_PUBLISHED,
                         ids=[f"{f}-{q or 'bf16'}{'-cuda' if c else ''}" for f, _, q, c in GLM5_PUBLISHED])
def test_glm5_without_own_head(tmp_path, fam, n, q, cuda):
    """vLLM loads GLM-5 (glm_moe_dsa) with the DeepSeek MTP loader
    (config/speculative.py hf_config_override -> deepseek_mtp.py /
    deepseek_v32/nvidia/mtp.py load_weights), which skips lm_head.weight:
    the MTP head stays unloaded (the top-level embedding loads). The audit
    simulated from the engine's parameter and module lists must say so as
    the audit of the real mapping does, under --family deepseek_v3 and
    under --family glm (GLM-4.5's loader would alias lm_head)."""
    cls = weights_vllm.cuda_mtp_class() if cuda else None
    model, _ = weights_vllm.build(weights_vllm.write_config(fam, str(tmp_path), q), cls)
    ts = [t for t in weights_vllm.checkpoint_tensors(fam, q) if t[0] not in GLM5_OWN_COPIES]
    keys = [k for k, _, _ in ts]
    cap = weights.capture(model, weights.zeros(keys, {k: s for k, _, s in ts},
                                               dtypes={k: t for k, t, _ in ts}))
    assert cap.error is None, cap.error
    assert "lm_head.weight" in cap.skipped
    files = {k: str(tmp_path / (k + ".txt")) for k in ("keys", "params", "modules", "map")}
    with open(files["keys"], "w") as f:
        f.writelines(k + "\n" for k in keys)
    cap.write(files["params"], files["modules"], files["map"])
    head = ("MTP_HEAD_EMBED_UNLOADED", "model.layers.78.shared_head.head.weight")
    for family in ("deepseek_v3", "glm"):
        real = audit(fam, n, files, "--mapping", files["map"], family=family)
        sim = audit(fam, n, files, family=family)
        assert real == sim, (family, real, sim)
        assert [(c, t) for c, _, t in real] == [head], (family, real)


@only_023
def test_023_has_no_cuda_v32_class(tmp_path, capsys):
    """vLLM 0.23 has no models/deepseek_v32 (its V3.2 / GLM-5 MTP model is
    deepseek_mtp.py DeepSeekMTP): --cuda-class says so in one line, exit 2."""
    from mtpcheck import weights_cli

    assert weights_cli.main(["--family", "deepseek_v32", "--quant", "fp8", "--cuda-class",
                             "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no vllm/models/deepseek_v32/nvidia/mtp.py" in err[0], err
