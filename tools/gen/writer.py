"""HDF5 writing and bit-exact comparison of fixture files (FORMAT.md, version 1).

Why this exists: FORMAT.md is the contract between this generator and the
harness, so the layout, attribute types and dtype tags are produced in exactly
one place, and `--check` compares files through the same reader.

Conventions (also in README.md):
* string attributes (file, case and the per-dataset `dtype`) are scalar
  variable-length UTF-8 strings (h5py's default for str);
* float attributes are scalar float64, integer attributes scalar int64;
* float16/bfloat16 datasets are <u2 bit patterns, the rest native little-endian;
* datasets of 4096 elements or more are gzip (level 6) + shuffle compressed
  (unless written with compress=False);
* a dataset whose dtype, shape and bytes equal one already written in the same
  file (64 elements or more) is written as an HDF5 soft link to the first one.
"""

import datetime
import hashlib

import h5py
import numpy as np

import fp8
import numerics

FORMAT = "mtpcheck-fixture"
FORMAT_VERSION = 1
GENERATOR = "mtpcheck tools/gen/mtpgen.py 1.0 (NumPy float64, independent of reference/)"
STR = h5py.string_dtype("utf-8")
COMPRESS_MIN = 4096
LINK_MIN = 64


class Case:
    """One test vector: attrs (op, family, seed, ...), inputs and expected tensors.

    Tensors are (values, dtype) pairs; names may contain '/' for sub-groups
    (draft_chain's layer.<l>/ and step.<s>/)."""

    def __init__(self, file, case_id, attrs, inputs, expected):
        self.file = file
        self.case_id = case_id
        self.attrs = attrs
        self.inputs = inputs
        self.expected = expected


def _set_attr(obj, key, value):
    if isinstance(value, str):
        obj.attrs.create(key, data=value, dtype=STR)
    elif isinstance(value, (bool, np.bool_)):
        raise TypeError("boolean attribute %s not allowed" % key)
    elif isinstance(value, (int, np.integer)):
        obj.attrs.create(key, data=np.int64(value), dtype="<i8")
    elif isinstance(value, (float, np.floating)):
        obj.attrs.create(key, data=np.float64(value), dtype="<f8")
    else:
        raise TypeError("attribute %s: unsupported type %r" % (key, type(value)))


def _check_tensor(name, values, dtype):
    if dtype not in numerics.DTYPES:
        raise ValueError("%s: unknown dtype %s" % (name, dtype))
    if (dtype in numerics.FLOAT_DTYPES or dtype in fp8.DTYPES) and \
            not numerics.representable(values, dtype):
        raise ValueError("%s: values not representable in %s" % (name, dtype))


class _FileWriter:
    def __init__(self, path, description, version=FORMAT_VERSION, compress=True):
        self.f = h5py.File(path, "w")
        self.seen = {}
        self.compress = compress
        _set_attr(self.f, "format", FORMAT)
        _set_attr(self.f, "format_version", version)
        _set_attr(self.f, "generator", GENERATOR)
        now = datetime.datetime.now(datetime.timezone.utc)
        _set_attr(self.f, "created", now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        if description:
            _set_attr(self.f, "description", description)
        self.cases = self.f.create_group("cases")

    def dataset(self, group, name, values, dtype):
        _check_tensor(name, values, dtype)
        data = numerics.encode(values, dtype)
        parent = group
        parts = name.split("/")
        for p in parts[:-1]:
            parent = parent.require_group(p)
        leaf = parts[-1]
        key = None
        # observed/ datasets are never links nor link targets (format v2 rule 12)
        if data.size >= LINK_MIN and "/observed" not in parent.name:
            key = (dtype, data.shape, hashlib.sha256(np.ascontiguousarray(data)).hexdigest())
            if key in self.seen:
                parent[leaf] = h5py.SoftLink(self.seen[key])
                return
        kw = {}
        if data.size >= COMPRESS_MIN and self.compress:
            kw = {"compression": "gzip", "compression_opts": 6, "shuffle": True}
        ds = parent.create_dataset(leaf, data=data, **kw)
        _set_attr(ds, "dtype", dtype)
        if key is not None:
            self.seen[key] = ds.name

    def case(self, case):
        if case.case_id in self.cases:
            raise ValueError("duplicate case id %s" % case.case_id)
        g = self.cases.create_group(case.case_id)
        for k, v in case.attrs.items():
            _set_attr(g, k, v)
        for sect, tensors in (("inputs", case.inputs), ("expected", case.expected)):
            sg = g.create_group(sect)
            for name, (values, dtype) in tensors.items():
                self.dataset(sg, name, values, dtype)

    def close(self):
        self.f.close()


def write_file(path, description, cases, compress=True):
    """cases: a list, or an iterable that makes each case as it is written (so
    that only one is in memory: the V4.1-sized goldens); then no version 2 name
    may occur. compress=False writes no gzip (goldens written at test time,
    where gzip of random bits costs more than it saves)."""
    listed = isinstance(cases, list)
    w = _FileWriter(path, description, 2 if listed and _v2(cases) else FORMAT_VERSION, compress)
    try:
        for c in cases:
            if not listed and _v2([c]):
                raise ValueError("%s: format version 2 names in a streamed file" % c.case_id)
            w.case(c)
            del c  # before the next one is made
    finally:
        w.close()


def _v2(cases):
    """FORMAT.md version 2 names (float8 tensors, proj_quant) only in a version 2 file."""
    return any(dt in fp8.DTYPES for c in cases for (_, dt) in c.inputs.values()) or \
        any("proj_quant" in c.attrs for c in cases)


# --------------------------------------------------------------------------- reading back / comparing

def _attr_key(v):
    """A bit-exact, type-aware representation of an attribute value."""
    if isinstance(v, bytes):
        return ("bytes", v)
    if isinstance(v, str):
        return ("str", v)
    a = np.asarray(v)
    if a.dtype.kind in "OSU":
        return ("str", str(v))
    return (a.dtype.str, a.shape, a.tobytes())


def _attrs(obj, skip=()):
    return {k: _attr_key(obj.attrs[k]) for k in obj.attrs if k not in skip}


def snapshot(path):
    """{object path: description} of a whole file, soft links resolved."""
    out = {}

    def walk(g, prefix):
        for k in g:
            obj = g[k]
            p = prefix + "/" + k
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                out[p] = ("dataset", data.dtype.str, data.shape, data, _attrs(obj))
            else:
                out[p] = ("group", _attrs(obj))
                walk(obj, p)

    with h5py.File(path, "r") as f:
        out["/"] = ("group", _attrs(f, skip=("created",)))
        walk(f, "")
    return out


def _where(fname, p):
    parts = p.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "cases":
        rest = "/".join(parts[2:]) or "(case attributes)"
        return "%s: case %s: %s" % (fname, parts[1], rest)
    return "%s: %s" % (fname, p)


def _diff_data(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return "dtype/shape %s%s vs %s%s" % (a.dtype, a.shape, b.dtype, b.shape)
    if a.tobytes() == b.tobytes():  # also every dataset with no element
        return None
    av = np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (-1,)) if a.ndim else None
    if av is None:
        return "scalar %r vs %r" % (a, b)
    bv = np.ascontiguousarray(b).view(np.uint8).reshape(b.shape + (-1,))
    bad = np.any(av != bv, axis=-1)
    first = tuple(int(i) for i in np.argwhere(bad)[0])

    def show(x):
        raw = np.asarray(x).tobytes()[::-1].hex()      # big-endian hex of the stored bits
        return "0x%s" % raw if x.dtype.kind == "u" else "%r (0x%s)" % (x, raw)
    return "%d of %d elements differ, first at %s: committed %s vs regenerated %s" % (
        int(bad.sum()), a.size, first, show(a[first]), show(b[first]))


def compare(committed, regenerated, fname):
    """List of mismatch messages between two fixture files (empty if identical)."""
    a, b = snapshot(committed), snapshot(regenerated)
    msgs = []
    for p in sorted(set(a) | set(b)):
        if p not in b:
            msgs.append("%s: present in the committed file, not regenerated" % _where(fname, p))
            continue
        if p not in a:
            msgs.append("%s: regenerated but missing from the committed file" % _where(fname, p))
            continue
        ea, eb = a[p], b[p]
        if ea[0] != eb[0]:
            msgs.append("%s: %s vs %s" % (_where(fname, p), ea[0], eb[0]))
            continue
        if ea[-1] != eb[-1]:
            keys = sorted(k for k in set(ea[-1]) | set(eb[-1]) if ea[-1].get(k) != eb[-1].get(k))
            msgs.append("%s: attributes differ: %s" % (_where(fname, p), ", ".join(keys)))
        if ea[0] == "dataset":
            d = _diff_data(ea[3], eb[3])
            if d:
                msgs.append("%s: %s" % (_where(fname, p), d))
    return msgs
