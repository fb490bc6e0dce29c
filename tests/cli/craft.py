#!/usr/bin/python3
"""Hostile fixture files for the CLI input tests (tests/cli/inputs.sh).

craft.py KIND OUT.h5 SRC_DIR: writes one small file breaking one rule, built
from the bundled goldens in SRC_DIR (fixtures/). Nothing binary is committed.
"""
import sys

import h5py
import numpy as np

NORM = "rmsnorm.bf16.eager.T3.H256"
NORM2 = "rmsnorm.bf16.eager.T64.H256"


def copy_norm(src, out, ids=(NORM,)):
    f = h5py.File(out, "w")
    s = h5py.File(src + "/norms.h5", "r")
    for k, v in s.attrs.items():
        f.attrs[k] = v
    f.create_group("cases")
    for i in ids:
        s.copy(s["cases/" + i], f["cases"], name=i)
    return f


def main():
    kind, out, src = sys.argv[1], sys.argv[2], sys.argv[3]
    if kind == "chain_missing_step":
        f = h5py.File(out, "w")
        s = h5py.File(src + "/chains.h5", "r")
        for k, v in s.attrs.items():
            f.attrs[k] = v
        f.create_group("cases")
        cid = sorted(s["cases"])[0]
        s.copy(s["cases/" + cid], f["cases"], name=cid)
        del f["cases/%s/expected/step.1" % cid]
        f.attrs["format_version"] = np.int64(2)  # a v1 golden may be partial
        return
    if kind in ("sparse",):
        f = copy_norm(src, out, ())
        g = f.create_group("cases/huge")
        for k, v in h5py.File(src + "/norms.h5")["cases/" + NORM].attrs.items():
            g.attrs[k] = v
        rows, h = 16384, 65536  # two 2 GiB bf16 tensors, nothing written
        for name in ("inputs/x", "expected/y"):
            d = g.create_dataset(name, shape=(rows, h), dtype="<u2")
            d.attrs["dtype"] = "bfloat16"
        w = g.create_dataset("inputs/weight", data=np.full(h, 0x3F80, "<u2"))
        w.attrs["dtype"] = "bfloat16"
        return
    f = copy_norm(src, out, (NORM, NORM2))
    c = f["cases/" + NORM]
    if kind == "extlink":
        del c["inputs/x"]
        c["inputs/x"] = h5py.ExternalLink(src + "/norms.h5",
                                          "/cases/%s/inputs/x" % NORM)
    elif kind == "extlink_case":
        del f["cases/" + NORM2]
        f["cases/" + NORM2] = h5py.ExternalLink(src + "/norms.h5",
                                                "/cases/" + NORM2)
    elif kind == "softlink_ok":
        del c["inputs/weight"]
        c["inputs/weight"] = h5py.SoftLink("/cases/%s/inputs/weight" % NORM2)
    elif kind == "softlink_group":
        del c["inputs/weight"]
        c["inputs/weight"] = h5py.SoftLink("/cases/%s/inputs" % NORM2)
    elif kind == "softlink_relative":
        del c["inputs/weight"]
        c["inputs/weight"] = h5py.SoftLink("../../%s/inputs/weight" % NORM2)
    elif kind == "softlink_observed":  # v2 rule 12 (the v1 text allows it)
        f.attrs["format_version"] = np.int64(2)
        c.create_group("observed")
        c["observed/y"] = h5py.SoftLink("/cases/%s/expected/y" % NORM)
    elif kind == "filter":
        x = c["inputs/x"][...]
        del c["inputs/x"]
        d = c.create_dataset("inputs/x", data=x, chunks=x.shape,
                             scaleoffset=0)
        d.attrs["dtype"] = "bfloat16"
    elif kind == "filter_ok":
        x = c["inputs/x"][...]
        del c["inputs/x"]
        d = c.create_dataset("inputs/x", data=x, chunks=x.shape,
                             compression="gzip", shuffle=True,
                             fletcher32=True)
        d.attrs["dtype"] = "bfloat16"
    elif kind == "external_storage":
        x = c["inputs/x"][...]
        del c["inputs/x"]
        d = c.create_dataset("inputs/x", shape=x.shape, dtype=x.dtype,
                             external=[(out + ".raw", 0, x.nbytes)])
        d[...] = x
        d.attrs["dtype"] = "bfloat16"
    elif kind == "dtype_bytes":  # not UTF-8: the error line must stay valid
        c["inputs/x"].attrs["dtype"] = np.bytes_(b"bf\xff\xfe\x07")
    elif kind == "fv_float":
        f.attrs["format_version"] = np.float64(1.0)
    elif kind in ("atol_huge", "atol_vacuous", "rtol_big", "atol_nan"):
        y = c["expected/y"]
        y.attrs["rtol"] = 2.0 if kind == "rtol_big" else 0.016
        y.attrs["atol"] = {"atol_huge": 1e300, "atol_vacuous": 50.0,
                           "rtol_big": 0.0, "atol_nan": np.nan}[kind]
    elif kind == "atol_ok":
        c["expected/y"].attrs["rtol"] = 0.02
        c["expected/y"].attrs["atol"] = 1e-3
        c["expected/y"].attrs["tolerance_origin"] = "test override"
    elif kind == "obs_dtype":
        y = c["expected/y"][...].astype(np.uint32) << 16
        d = c.create_dataset("observed/y", data=y.view(np.float32))
        d.attrs["dtype"] = "float32"
        del c["expected"]
    elif kind in ("verify_empty", "verify_ok"):
        y = c["expected/y"][...]
        if kind == "verify_empty":
            y = y[:0]
        d = c.create_dataset("observed/y", data=y)
        d.attrs["dtype"] = "bfloat16"
        del c["expected"]
        del f["cases/" + NORM2]
    elif kind == "verify_noobs":
        del f["cases/" + NORM2]
    else:
        sys.exit("craft.py: unknown kind " + kind)


if __name__ == "__main__":
    main()
