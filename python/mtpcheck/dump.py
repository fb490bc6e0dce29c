"""Writing dumps in the mtpcheck fixture format (version 1, and version 2 for
real engines: float8 dtypes, declared conventions, the captured block, weights
by reference or by subset).

    from mtpcheck.dump import Dump, Tensor
    with Dump("step.h5", generator="my-engine 1.2 capture") as d:
        d.case("layer61.step0", op="mtp_step", family="deepseek_v3",
               attrs={"eps": 1e-6, "rounding": "eager", "logits_dtype": "bfloat16"},
               inputs={"embeds": Tensor(e, "bfloat16"), "positions": Tensor(p, "int64"), ...},
               observed={"logits": logits_torch_tensor, ...})

A tensor is a `Tensor`, a `(values, dtype)` pair, a torch tensor (its dtype
decides the tag; bf16/fp16/fp8 are written bit for bit) or a `Link` to a
dataset already written.  Names may hold '/' for sub-groups (`layer.0/x`,
`step.1/block_in`).  An input tensor identical (dtype, shape and bytes) to one
written before in the file is stored as a soft link to it, so weights shared by
the steps of a capture are stored once.  The file is version 1 unless it uses
something of version 2; then it is version 2.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import h5py
import numpy as np

from . import encode

FORMAT = "mtpcheck-fixture"
STR = h5py.string_dtype("utf-8")
CASE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
# a tensor name: NAME or GROUP/NAME (layer.<l>/, step.<s>/: one group deep)
NAME_PART = re.compile(r"^[A-Za-z0-9_.-]+$")
PARAM_MAX = 1000.0  # the reader's bound on epsilons and post_mult
# The family rows of families/*.c as far as the writer needs them: the name
# and whether the layer carries mHC streams (test_dump checks both against
# `mtpcheck list families`).
FAMILY_MHC = {"deepseek_v3": False, "glm": False, "deepseek_v4": True, "glm4_moe_lite": False,
              "mimo": False, "kimi_k3": False}
FAMILY_MHC["qwen3_next"] = False  # zero-centred (1 + w) norms, SPEC.md §2.6
FAMILY_MHC["step3p5"] = False  # zero-centred norms, the pre-norm sum recycled
FAMILY_MHC["inkling"] = False  # two embedding norms, a mup head (SPEC.md Step V3-9)
FAMILIES = tuple(FAMILY_MHC)

# FORMAT.md v2 conventions: attribute -> allowed values
CONVENTIONS = {
    "add_norm_input": ("residual", "sum"),
    "final_add": ("unfused", "fused"),
    "silu_mul_rounding": ("once", "twice"),
    "logits_dtype": ("float32", "bfloat16"),
    "pos0_mask": (0, 1),
    "proj_quant": ("none", "fp8_w", "fp8_w8a8"),
}
V2_CASE_ATTRS = set(CONVENTIONS) | {"block", "max_position", "act_quant_eps"}
V2_DATASET_ATTRS = {"ref_file", "ref_tensor", "ref_sha256", "ref_shape", "live_sha256",
                    "live_shard", "full_rows"}
COMPRESS_MIN = 4096
LINK_MIN = 64


if TYPE_CHECKING:  # an annotation only: not imported at run time
    from typing_extensions import Self


class DumpError(ValueError):
    """A dump that would break the format, or a capture bound reached."""


class Tensor:
    """Values with their dtype tag and optional dataset attributes
    (`live_sha256`, `full_rows`, `rtol`, ...)."""

    def __init__(self, values: Any, dtype: str | None = None, **attrs: Any) -> None:
        if hasattr(values, "detach"):  # a torch tensor
            arr, tag = encode.from_torch(values)
            if dtype is not None and dtype != tag:
                raise DumpError(f"torch {tag} tensor given with dtype {dtype}")
            self.stored, self.dtype = arr, tag
        else:
            if dtype is None:
                raise DumpError("a NumPy tensor needs its dtype tag")
            self.stored, self.dtype = encode.encode(values, dtype), dtype
        self.stored = np.ascontiguousarray(self.stored)
        self.attrs = attrs

    @property
    def nbytes(self) -> int:
        """The stored bytes."""
        return int(self.stored.nbytes)

    def sha256(self) -> str:
        """SHA-256 of the stored bytes (row-major, little-endian): FORMAT.md v2 rule 14."""
        return hashlib.sha256(self.stored.tobytes()).hexdigest()

    def values(self) -> np.ndarray:
        """The values as float64 (int64 for integer tags)."""
        return encode.decode(self.stored, self.dtype)


class Link:
    """A soft link to a dataset already in the file (`/cases/<id>/...`)."""

    def __init__(self, target: str) -> None:
        if not target.startswith("/cases/"):
            raise DumpError(f"link target {target!r} is not /cases/<id>/...")
        self.target = target


def as_tensor(spec: Any) -> Tensor | Link:
    """A tensor spec (Tensor, Link, (values, dtype) pair, torch tensor) as a Tensor or Link."""
    if isinstance(spec, (Tensor, Link)):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2:
        return Tensor(spec[0], spec[1])
    if hasattr(spec, "detach"):
        return Tensor(spec)
    raise DumpError("a tensor is a Tensor, a (values, dtype) pair, a torch tensor or a Link")


def check_name(part: str, name: str) -> None:
    """Refuses a tensor name that verify would refuse or that would leave
    its group: each '/'-separated part of [A-Za-z0-9_.-], not '.' or '..',
    at most one group deep (no absolute path such as /cases/other/x)."""
    parts = name.split("/") if isinstance(name, str) else []
    if not 1 <= len(parts) <= 2 or any(not NAME_PART.match(q) or q in (".", "..") for q in parts):
        raise DumpError(f"{part}/{name!r}: a tensor name is NAME or GROUP/NAME (one group deep), each part of"
                        " [A-Za-z0-9_.-] and neither '.' nor '..'")


def check_value(key: str, value: Any, where: str | None = None) -> None:
    """Refuses a number verify would refuse: any float that is not finite,
    an epsilon outside [0, 1000], a post_mult outside (0, 1000]. The error
    names the attribute as `where` (default: its key)."""
    where = where or key
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        return
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise DumpError(f"attribute {where} = {value!r}: must be a finite number")
    low_ok = value > 0 if key == "post_mult" else value >= 0
    if (key.endswith("eps") or key == "post_mult") and not (low_ok and value <= PARAM_MAX):
        low = "> 0" if key == "post_mult" else ">= 0"
        raise DumpError(f"attribute {where} = {value!r}: must be {low} and at most {PARAM_MAX:g}")


def set_attr(obj: Any, key: str, value: Any) -> None:
    """Strings as UTF-8 scalars, integers as int64, floats as float64."""
    check_value(key, value)
    if isinstance(value, str):
        obj.attrs.create(key, data=value, dtype=STR)
    elif isinstance(value, (bool, np.bool_)):
        raise DumpError(f"attribute {key}: booleans are not part of the format (use 0/1)")
    elif isinstance(value, (int, np.integer)):
        obj.attrs.create(key, data=np.int64(value), dtype="<i8")
    elif isinstance(value, (float, np.floating)):
        obj.attrs.create(key, data=np.float64(value), dtype="<f8")
    elif isinstance(value, (list, tuple, np.ndarray)):
        obj.attrs.create(key, data=np.asarray(value, dtype="<i8"))
    else:
        raise DumpError(f"attribute {key}: unsupported type {type(value).__name__}")


def check_conventions(attrs: Mapping[str, Any]) -> None:
    for key, allowed in CONVENTIONS.items():
        if key not in attrs:
            continue
        v = attrs[key]
        if key == "pos0_mask" and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise DumpError(f"pos0_mask must be the integer 0 or 1, not {v!r}")
        if v not in allowed:
            raise DumpError("{} = {!r}: allowed {}".format(key, v, ", ".join(map(str, allowed))))
    if attrs.get("block", "synthetic") not in ("synthetic", "captured"):
        raise DumpError("block = {!r}: allowed synthetic, captured".format(attrs["block"]))


class Dump:
    """One dump file. `max_bytes` bounds the tensor bytes written (links are
    free); going past it raises DumpError before anything more is written."""

    def __init__(self, path: str, generator: str, description: str | None = None,
                 max_bytes: int | None = None, version: int | None = None) -> None:
        self.path = path
        self.f = h5py.File(path, "w")
        self.max_bytes = max_bytes
        self.written = 0
        self.forced_version = version
        self.v2 = False
        self.seen: dict[tuple[Any, ...], str] = {}  # (dtype, shape, sha256) -> dataset path, for inputs
        set_attr(self.f, "format", FORMAT)
        set_attr(self.f, "generator", generator)
        now = datetime.datetime.now(datetime.timezone.utc)
        set_attr(self.f, "created", now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        if description:
            set_attr(self.f, "description", description)
        self.cases = self.f.create_group("cases")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Writes the format version and closes the file (once)."""
        if self.f is None:
            return
        version = self.forced_version or (2 if self.v2 else 1)
        if version == 1 and self.v2:
            raise DumpError(f"{self.path}: uses version-2 features but version 1 was asked for")
        set_attr(self.f, "format_version", version)
        self.f.close()
        self.f = None

    def case(self, case_id: str, op: str, family: str, seed: int = 0,
             attrs: Mapping[str, Any] | None = None, inputs: Mapping[str, Any] | None = None,
             observed: Mapping[str, Any] | None = None,
             expected: Mapping[str, Any] | None = None) -> str:
        """Writes one case; returns its group path."""
        if not CASE_ID.match(case_id):
            raise DumpError(f"case id {case_id!r}: allowed characters are [A-Za-z0-9_.-]")
        if family not in FAMILIES:
            raise DumpError("family {!r}: one of {}".format(family, ", ".join(FAMILIES)))
        attrs = dict(attrs or {})
        check_conventions(attrs)
        for key, value in attrs.items():
            check_value(key, value)
        parts = (("inputs", inputs), ("expected", expected), ("observed", observed))
        for part, tensors in parts:
            for name, spec in (tensors or {}).items():
                check_name(part, name)
                if isinstance(spec, Tensor):
                    for key, value in spec.attrs.items():
                        check_value(key, value, f"{key} of {part}/{name}")
        if V2_CASE_ATTRS & set(attrs):
            self.v2 = True
        if case_id in self.cases:
            raise DumpError(f"case {case_id} written twice")
        g = self.cases.create_group(case_id)
        set_attr(g, "op", op)
        set_attr(g, "family", family)
        set_attr(g, "seed", int(seed))
        for key, value in attrs.items():
            set_attr(g, key, value)
        for part, tensors in parts:
            if tensors is None:
                continue
            pg = g.create_group(part)
            for name, spec in tensors.items():
                self.put(pg, name, spec, may_link=(part == "inputs"))
        return g.name

    def put(self, group: h5py.Group, name: str, spec: Any, may_link: bool = True) -> None:
        """Writes one tensor (or a link to an identical input written before) into group."""
        check_name(group.name, name)
        t = as_tensor(spec)
        if isinstance(t, Link):
            if not may_link:
                raise DumpError(f"{group.name}/{name}: observed datasets are never links")
            self._link(group, name, t.target)
            return
        if t.dtype in encode.V2_DTYPES or V2_DATASET_ATTRS & set(t.attrs):
            self.v2 = True
        key = (t.dtype, t.stored.shape, t.sha256(), repr(sorted(t.attrs.items())))
        if may_link and t.stored.size >= LINK_MIN and key in self.seen:
            self._link(group, name, self.seen[key])
            return
        if self.max_bytes is not None and self.written + t.nbytes > self.max_bytes:
            raise DumpError(f"{self.path}: writing {group.name}/{name} would pass the bound of "
                            f"{self.max_bytes:d} bytes")
        kw = {}
        if t.stored.size >= COMPRESS_MIN:
            kw = {"compression": "gzip", "compression_opts": 4, "shuffle": True}
        d = group.create_dataset(name, data=t.stored, **kw)
        self.written += t.nbytes
        set_attr(d, "dtype", t.dtype)
        for key2, value in t.attrs.items():
            set_attr(d, key2, value)
        if may_link:
            self.seen.setdefault(key, d.name)

    def _link(self, group: h5py.Group, name: str, target: str) -> None:
        obj = self.f.get(target, getlink=True)
        if not isinstance(obj, h5py.HardLink) or not isinstance(self.f[target], h5py.Dataset):
            raise DumpError(f"link {group.name}/{name} -> {target}: the target must be a dataset")
        if "/observed/" in target:
            raise DumpError(f"link {group.name}/{name} -> {target}: observed datasets are never link targets")
        parent, _, leaf = name.rpartition("/")
        g = group.require_group(parent) if parent else group
        g[leaf] = h5py.SoftLink(target)
