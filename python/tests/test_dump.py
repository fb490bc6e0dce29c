"""The dump writer: encodings, layout, links, bounds, versions; and, when the C
binary is there ($MTPCHECK_BIN), `mtpcheck verify` on what it wrote."""

import h5py
import numpy as np
import pytest

from mtpcheck import encode, verify
from mtpcheck.dump import Dump, DumpError, Link, Tensor


def test_bf16_round_to_nearest_even():
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa (1.0) wins
    vals = np.array([1.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -2.5, np.inf], dtype=np.float32)
    bits = encode.bf16_bits(vals)
    assert list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80]
    assert encode.bf16_values(bits)[3] == -2.5
    assert np.isnan(encode.bf16_values(encode.bf16_bits([np.nan])))[0]


def test_e4m3_known_codes():
    vals = [0.0, 1.0, 448.0, 1000.0, -2.0, 2.0**-9, 2.0**-10, 3 * 2.0**-10, 1.0625, 1.1875]
    # 2^-10 ties 0 and 2^-9: even (0); 3*2^-10 ties 2^-9 (odd code 1) and 2^-8 (code 2)
    # 1.0625 ties 1.0 (0x38) and 1.125 (0x39): even; 1.1875 ties 0x39/0x3A: even
    assert list(encode.e4m3_bits(vals)) == [0x00, 0x38, 0x7E, 0x7E, 0xC0, 0x01, 0x00, 0x02,
                                            0x38, 0x3A]
    assert encode.e4m3_bits([np.nan])[0] == 0x7F
    every = np.arange(256, dtype=np.uint8)
    finite = every[(every & 0x7F) != 0x7F]
    back = encode.e4m3_bits(encode.e4m3_values(finite))
    same = (back == finite) | ((finite == 0x80) & (back == 0x80))
    assert same.all()


def test_e8m0():
    assert list(encode.e8m0_bits([1.0, 0.5, 2.0**10])) == [127, 126, 137]
    with pytest.raises(ValueError):
        encode.e8m0_bits([3.0])


def _bf16(rng, shape, lo=-2.0, hi=2.0):
    return encode.bf16_bits(rng.uniform(lo, hi, shape).astype(np.float32))


def test_round_trip_links_and_version(tmp_path):
    rng = np.random.default_rng(1)
    w = _bf16(rng, (64, 64))
    scale = np.full((1, 1), 0.25, dtype=np.float32)
    path = str(tmp_path / "d.h5")
    with Dump(path, "test") as d:
        d.case("a", op="eh_proj", family="glm", attrs={"eps": 1e-5},
               inputs={"x": (w[:, :], "bfloat16"), "weight": Tensor(w, "bfloat16", live_sha256="x")})
        d.case("b", op="eh_proj", family="glm", attrs={"logits_dtype": "bfloat16", "pos0_mask": 1},
               inputs={"weight": Tensor(w, "bfloat16", live_sha256="x"),
                       "q": Tensor(np.array([1.0, 448.0]), "float8_e4m3fn"),
                       "layer.0/s": (scale, "float32"), "l": Link("/cases/a/inputs/x")},
               observed={"y": (w, "bfloat16")})
    with h5py.File(path) as f:
        assert f.attrs["format_version"] == 2
        assert f["cases/b"].attrs["pos0_mask"] == 1
        assert f["cases/b"].attrs["pos0_mask"].dtype == np.int64
        link = f["cases/b/inputs"].get("weight", getlink=True)
        assert isinstance(link, h5py.SoftLink) and link.path == "/cases/a/inputs/weight"
        assert isinstance(f["cases/b/observed"].get("y", getlink=True), h5py.HardLink)
        assert f["cases/b/inputs/q"].dtype == np.uint8
        assert list(f["cases/b/inputs/q"][()]) == [0x38, 0x7E]
        assert f["cases/b/inputs/q"].attrs["dtype"] == "float8_e4m3fn"
        assert f["cases/b/inputs/layer.0/s"].attrs["dtype"] == "float32"
        assert np.array_equal(f["cases/b/inputs/weight"][()], w)
        assert f["cases/a/inputs/x"].dtype == np.dtype("<u2")


def test_v1_when_nothing_of_v2(tmp_path):
    path = str(tmp_path / "v1.h5")
    with Dump(path, "test") as d:
        d.case("a", op="rmsnorm", family="deepseek_v3", attrs={"eps": 1e-6, "rounding": "fused"},
               inputs={"x": (np.ones((1, 8)), "bfloat16")})
    with h5py.File(path) as f:
        assert f.attrs["format_version"] == 1


@pytest.mark.parametrize("attrs", [{"pos0_mask": True}, {"pos0_mask": "1"}, {"final_add": "maybe"},
                                   {"logits_dtype": "float16"}, {"block": "real"}])
def test_bad_conventions_refused(tmp_path, attrs):
    with Dump(str(tmp_path / "x.h5"), "test") as d, pytest.raises(DumpError):
        d.case("a", op="mtp_step", family="glm", attrs=attrs)


def test_bounds_and_bad_names(tmp_path):
    with Dump(str(tmp_path / "x.h5"), "test", max_bytes=1000) as d:
        with pytest.raises(DumpError, match="bound"):
            d.case("a", op="rmsnorm", family="glm", inputs={"x": (np.zeros((32, 32)), "float32")})
        with pytest.raises(DumpError):
            d.case("bad id", op="rmsnorm", family="glm")
        with pytest.raises(DumpError):
            d.case("c", op="rmsnorm", family="llama")
        d.case("d", op="rmsnorm", family="glm", inputs={"x": (np.zeros((2, 2)), "float32")})
        with pytest.raises(DumpError, match="never links"):
            d.case("e", op="rmsnorm", family="glm", observed={"y": Link("/cases/d/inputs/x")})


@pytest.mark.parametrize("name", ["..", ".", "/cases/other/x", "a/b/c", "a//b", "", "x y",
                                  "layer.0/..", "step.1/"])
def test_bad_tensor_names_refused_before_writing(tmp_path, name):
    """Names verify would refuse, or that leave the case's group (an absolute
    /cases/other/x wrote into another case), raise naming the tensor and
    leave nothing of the case in the file."""
    path = str(tmp_path / "x.h5")
    with Dump(path, "test") as d:
        for part in ("inputs", "observed"):
            with pytest.raises(ValueError, match=r"%s/.*a tensor name" % part):
                d.case("a", op="rmsnorm", family="glm", attrs={"eps": 1e-6, "rounding": "fused"},
                       **{part: {"weight": (np.ones(8), "bfloat16"),
                                 name: (np.ones((1, 8)), "bfloat16")}})
        with pytest.raises(ValueError, match="a tensor name"):
            d.put(d.cases.create_group("b"), name, (np.ones(8), "bfloat16"))
    with h5py.File(path) as f:
        assert list(f["cases"]) == ["b"] and len(f["cases/b"]) == 0


@pytest.mark.parametrize("attrs,what", [({"eps": float("nan")}, "eps"),
                                        ({"eps": np.float32("inf")}, "eps"),
                                        ({"eps": -1e-6}, "eps"),
                                        ({"hc_eps": 1e4}, "hc_eps"),
                                        ({"post_mult": 0.0}, "post_mult"),
                                        ({"act_quant_eps": float("-inf")}, "act_quant_eps")])
def test_bad_numbers_refused_before_writing(tmp_path, attrs, what):
    path = str(tmp_path / "x.h5")
    with Dump(path, "test") as d:
        with pytest.raises(ValueError, match="attribute %s = " % what):
            d.case("a", op="rmsnorm", family="glm", attrs=dict({"rounding": "fused"}, **attrs),
                   inputs={"x": (np.ones((1, 8)), "bfloat16")})
        with pytest.raises(ValueError, match="attribute rtol of observed/y = nan"):
            d.case("b", op="rmsnorm", family="glm", attrs={"eps": 1e-6, "rounding": "fused"},
                   observed={"y": Tensor(np.ones((1, 8)), "bfloat16", rtol=float("nan"))})
    with h5py.File(path) as f:
        assert len(f["cases"]) == 0


def _rmsnorm_case(rng, wrong=False):
    """A fused-rounding rmsnorm (one rounding, SPEC.md 2.2) in float64."""
    x = _bf16(rng, (4, 64))
    w = _bf16(rng, (64,), 0.5, 1.5)
    xf, wf = encode.bf16_values(x).astype(np.float64), encode.bf16_values(w).astype(np.float64)
    y = xf / np.sqrt(np.mean(xf * xf, axis=1, keepdims=True) + 1e-6) * wf
    if wrong:
        y = y * 1.05
    return {"x": (x, "bfloat16"), "weight": (w, "bfloat16")}, {"y": (y.astype(np.float32), "bfloat16")}


def _binary():
    b = verify.find_binary()
    if b is None:
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN to build/mtpcheck)")
    return b


def test_verify_passes_and_fails(tmp_path):
    binary = _binary()
    rng = np.random.default_rng(7)
    path = str(tmp_path / "v.h5")
    with Dump(path, "test") as d:
        for name, wrong in (("good", False), ("bad", True)):
            ins, obs = _rmsnorm_case(rng, wrong)
            d.case(name, op="rmsnorm", family="deepseek_v3", attrs={"eps": 1e-6, "rounding": "fused"},
                   inputs=ins, observed=obs)
    v = verify.run(path, binary)
    assert v.returncode == 1, v.text
    assert v.cases == {"good": "PASSED", "bad": "FAILED"}, v.text


def _verify_v2(tmp_path, extra_inputs, attrs):
    binary = _binary()
    rng = np.random.default_rng(8)
    ins, obs = _rmsnorm_case(rng)
    ins.update(extra_inputs)
    path = str(tmp_path / "v2.h5")
    with Dump(path, "test") as d:
        d.case("good", op="rmsnorm", family="deepseek_v3",
               attrs=dict({"eps": 1e-6, "rounding": "fused"}, **attrs), inputs=ins, observed=obs)
    with h5py.File(path) as f:
        assert f.attrs["format_version"] == 2
    v = verify.run(path, binary)
    if v.version_unsupported:
        pytest.skip("this mtpcheck reads format version 1 only: " + v.text.strip().splitlines()[0])
    return v


def test_verify_reads_v2(tmp_path):
    """A version-2 file (a declared convention) read back and judged by the
    harness; skipped, with the reason, while the binary reads version 1 only."""
    v = _verify_v2(tmp_path, {}, {"logits_dtype": "float32"})
    assert v.returncode == 0 and v.cases == {"good": "PASSED"}, v.text


def test_verify_reads_fp8(tmp_path):
    """float8 bit patterns as the harness reads them: an eh_proj whose weight is
    e4m3 with float32 block scales (proj_quant = fp8_w: the dequantized weight
    times the bf16 input, one rounding), judged against NumPy's product."""
    binary = _binary()
    rng = np.random.default_rng(9)
    h = 128
    x = _bf16(rng, (4, 2 * h))
    w = encode.e4m3_bits(rng.uniform(-1.5, 1.5, (h, 2 * h)))
    scale = np.array([[0.25, 0.0625]], dtype=np.float32)  # [ceil(H/128), ceil(2H/128)]
    wf = encode.e4m3_values(w).astype(np.float64) * np.repeat(scale, 128, axis=1).astype(np.float64)
    y = encode.bf16_values(x).astype(np.float64) @ wf.T
    path = str(tmp_path / "fp8.h5")
    with Dump(path, "test") as d:
        d.case("good", op="eh_proj", family="deepseek_v3", attrs={"proj_quant": "fp8_w"},
               inputs={"x": (x, "bfloat16"), "weight": Tensor(encode.e4m3_values(w), "float8_e4m3fn"),
                       "weight_scale_inv": (scale, "float32")},
               observed={"y": (y.astype(np.float32), "bfloat16")})
    with h5py.File(path) as f:
        assert f.attrs["format_version"] == 2
        assert np.array_equal(f["cases/good/inputs/weight"][()], w)
    v = verify.run(path, binary)
    assert v.returncode == 0 and v.cases == {"good": "PASSED"}, v.text


def test_family_names_are_the_binarys():
    """dump.FAMILIES is the writer's copy of the family rows (families/*.c):
    it must name exactly the families `mtpcheck list families` prints, so a
    new row cannot be refused by the writer or accepted only here."""
    import subprocess

    from mtpcheck import dump

    binary = verify.find_binary()
    if binary is None:
        pytest.skip("no mtpcheck binary")
    out = subprocess.run([binary, "list", "families"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout.splitlines()
    rows = {line.split()[0]: line.split()[2] == "yes" for line in out[1:]
            if line and not line[0].isspace()}
    assert rows == dump.FAMILY_MHC
