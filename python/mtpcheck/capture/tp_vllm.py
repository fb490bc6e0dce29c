"""vLLM's real DeepSeek V3 MTP step with tensor parallelism on CPU ranks
(issue 32; SPEC.md Step V3-8; DUMPS.md "Tensor-parallel steps").

Why this exists: the all-reduce bugs (SPEC.md §8.8) exist only with several
ranks, so the step is run the way vLLM runs it under `tensor_parallel_size =
P`: P local processes, vLLM's own distributed init over gloo, the tiny
DeepSeek V3 model of tiny_vllm.py built from vLLM's classes on every rank.
Every rank draws the same full checkpoint (per-tensor seeds) and vLLM's own
weight loaders take each rank's shard of it (the vocab-parallel embedding
and head, the block MLP's column- and row-parallel linears).

Each rank records its step with the ordinary capture hooks (one step, a
captured-block `mtp_step` case) and, around the block MLP's row-parallel
`down_proj`, the partial it hands to vLLM's `tensor_model_parallel_all_reduce`
(the reduction point, `reduce_at = moe` in the declared vocabulary: the
block FFN's output reduction). The per-rank files are then merged into the
one-file form verify reads: one case per rank, `block_out_parts [P, T, H]`,
the head gathered from the ranks' shards.

`drop_reduction_rank`: that rank's reduction is removed (the bug of TRT-LLM
#16617 on one rank): it still takes part in the collective, so the other
ranks do not hang, but keeps its own partial as the block output.
"""

from __future__ import annotations

import os
import socket
import zlib
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

import h5py
import numpy as np
import torch
import torch.multiprocessing as mp

from . import tiny_vllm

T = 4  # tokens of the step
MODEL_TYPE = "deepseek_v3"
STEP = "chain0.step0.layer0"  # the capture's case for a one-step chain


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _full_shape(module: torch.nn.Module, param: torch.nn.Parameter) -> list[int]:
    """The unsharded shape of a parameter, from vLLM's parallel layer classes."""
    from vllm.model_executor.layers.linear import (
        ColumnParallelLinear,
        RowParallelLinear,
    )
    from vllm.model_executor.layers.vocab_parallel_embedding import (
        VocabParallelEmbedding,
    )

    if isinstance(module, VocabParallelEmbedding):
        return [int(module.org_vocab_size), int(module.embedding_dim)]
    if isinstance(module, (ColumnParallelLinear, RowParallelLinear)) and param.dim() == 2:
        return [int(module.output_size), int(module.input_size)]
    return list(param.shape)


def load_full_checkpoint(model: torch.nn.Module, seed: int) -> None:
    """One full random checkpoint, the same on every rank (a seed per tensor
    name), each tensor handed to the parameter's own vLLM weight loader, which
    takes this rank's shard. Norm weights in [0.3, 1.7], the others
    N(0, 1/fan_in), as tiny_vllm.randomize draws them."""
    from vllm.model_executor.model_loader.weight_utils import default_weight_loader

    modules = dict(model.named_modules())
    with torch.no_grad():
        for name, p in model.named_parameters():
            owner = modules[name.rsplit(".", 1)[0]] if "." in name else model
            shape = _full_shape(owner, p)
            gen = torch.Generator().manual_seed(seed + zlib.crc32(name.encode()))
            if "norm" in name:
                full = 0.3 + 1.4 * torch.rand(shape, generator=gen)
            else:
                full = torch.randn(shape, generator=gen) / shape[-1] ** 0.5
            loader = getattr(p, "weight_loader", default_weight_loader)
            loader(p, full.to(p.dtype))


class PartialTap:
    """Records the partial the block MLP's down_proj hands to vLLM's
    tensor_model_parallel_all_reduce (linear.py's name for it, looked up at
    call time by RowParallelLinear.forward); with `drop`, this rank keeps its
    partial instead of the reduced sum (it still joins the collective)."""

    def __init__(self, down_proj: torch.nn.Module, drop: bool) -> None:
        from vllm.model_executor.layers import linear

        self.linear = linear
        self.orig = linear.tensor_model_parallel_all_reduce
        self.drop = drop
        self.inside = False
        self.parts: list[torch.Tensor] = []
        linear.tensor_model_parallel_all_reduce = self._all_reduce
        self.handles = [down_proj.register_forward_pre_hook(self._enter),
                        down_proj.register_forward_hook(self._leave)]

    def _enter(self, *_: Any) -> None:
        self.inside = True

    def _leave(self, *_: Any) -> None:
        self.inside = False

    def _all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        if not self.inside:
            return self.orig(x)
        self.parts.append(x.detach().clone())
        reduced = self.orig(x.clone())
        return x if self.drop else reduced

    def remove(self) -> None:
        self.linear.tensor_model_parallel_all_reduce = self.orig
        for h in self.handles:
            h.remove()


def _step_inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, tiny_vllm.V, (T,), generator=gen)
    pos = torch.tensor([0, 7, 8, 20])  # row 0 at position 0: the mask is exercised
    hidden = torch.randn(T, tiny_vllm.H, generator=gen).to(torch.bfloat16)
    return ids, pos, hidden


def _rank_main(rank: int, world: int, port: int, workdir: str,
               variants: tuple[tuple[str, int], ...]) -> None:
    """One rank: vLLM's distributed init over gloo, the model, then per
    variant (name, rank whose reduction is dropped or -1) one captured draft
    step: `<name>/rank<p>.h5` and `<name>/rank<p>.pt` (its partial, the
    gathered head). The variants share the process: vLLM's import is most
    of the time."""
    torch.set_num_threads(1)
    from vllm.distributed import init_distributed_environment, initialize_model_parallel

    def distributed() -> None:  # called by tiny_vllm.construct under the vLLM config
        init_distributed_environment(world_size=world, rank=rank, local_rank=rank,
                                     backend="gloo",
                                     distributed_init_method=f"tcp://127.0.0.1:{port:d}")
        initialize_model_parallel(world, 1)

    tiny_vllm._distributed = distributed
    model, vcfg = tiny_vllm.build(MODEL_TYPE, os.path.join(workdir, f"model{rank:d}"), K=1,
                                  tp=world)
    load_full_checkpoint(model, seed=0)
    tiny_vllm.after_loading(model, vcfg, vcfg.model_config)
    for name, drop_rank in variants:
        out = os.path.join(workdir, name)
        os.makedirs(out, exist_ok=True)
        _capture_step(model, vcfg, out, rank, drop=rank == drop_rank)


def _capture_step(model: torch.nn.Module, vcfg: Any, out: str, rank: int, drop: bool) -> None:
    from vllm.distributed import tensor_model_parallel_all_gather

    from .. import capture

    layer = next(iter(model.model.layers.values()))
    tap = PartialTap(layer.mtp_block.mlp.down_proj, drop=drop)
    cap = capture.install(engine="vllm", path=os.path.join(out, f"rank{rank:d}.h5"), steps=1,
                          model=model)
    ids, pos, hidden = _step_inputs(11)
    try:
        tiny_vllm.draft(model, vcfg, ids, pos, hidden, 1)
        cap.write()
    finally:
        cap.remove()
        tap.remove()
    if len(tap.parts) != 1:
        raise RuntimeError(f"rank {rank:d}: {len(tap.parts):d} reductions of the block MLP seen,"
                           " 1 expected")
    with torch.no_grad():
        head = tensor_model_parallel_all_gather(layer.shared_head.head.weight.contiguous(), 0)
    torch.save({"part": tap.parts[0], "head": head[:tiny_vllm.V].clone()},
               os.path.join(out, f"rank{rank:d}.pt"))


OK = (("ok", -1),)


def run_ranks(workdir: str, world: int = 2,
              variants: tuple[tuple[str, int], ...] = OK) -> list[str]:
    """Run the TP step on `world` local processes, once per variant (name,
    the rank whose block reduction is removed or -1); the variants' folders."""
    os.makedirs(workdir, exist_ok=True)
    port = _free_port()
    mp.start_processes(_rank_main, args=(world, port, workdir, variants), nprocs=world,
                       join=True, start_method="spawn")
    return [os.path.join(workdir, name) for name, _ in variants]


# the step's inputs that every rank holds alike (DUMPS.md: tagged replicated)
REPLICATED = ("embeds", "positions", "prev_hidden", "enorm_weight", "hnorm_weight",
              "eh_proj_weight", "shared_head_norm_weight", "block_in", "block_residual")
ATTRS = ("eps", "rounding", "block", "logits_dtype", "pos0_mask", "final_add",
         "silu_mul_rounding", "add_norm_input")


def _stored(d: h5py.Dataset) -> Any:
    """A dataset as a tensor spec carrying its stored bits: bf16 as a torch
    bfloat16 view of the uint16 words, anything else as (values, tag)."""
    tag = d.attrs["dtype"]
    tag = tag.decode() if isinstance(tag, bytes) else str(tag)
    arr = d[()]
    if tag == "bfloat16":
        return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
    return (arr, tag)


def _tagged(spec: Any, role: str) -> Any:
    from ..dump import Tensor

    t = Tensor(spec) if hasattr(spec, "detach") else Tensor(spec[0], spec[1])
    t.attrs["tp"] = role
    return t


def _own_columns(logits: torch.Tensor, rank: int, world: int) -> dict[str, Any]:
    """The logits columns rank `rank` computed itself (its vocab shard of the
    vocab-parallel head, V/P contiguous rows), with `logits_rows` naming them:
    the other columns of the gathered logits are other ranks' work."""
    v = logits.shape[-1]
    rows = np.arange(rank * v // world, (rank + 1) * v // world, dtype=np.int64)
    return {"logits": logits[:, rows].contiguous(), "logits_rows": (rows, "int64")}


def _rank_case(workdir: str, p: int, world: int, part: Any, head: torch.Tensor,
               reduce_at: str, own_logits: bool) -> tuple[dict[str, Any], dict[str, Any],
                                                          dict[str, Any]]:
    """(attrs, inputs, observed) of rank p's captured step, `part` its
    block_out_parts (every rank's) or block_out_part (its own)."""
    with h5py.File(os.path.join(workdir, f"rank{p:d}.h5"), "r") as f:
        case = f["cases"][STEP]
        attrs = {k: case.attrs[k] for k in ATTRS if k in case.attrs}
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
        attrs.update(tp_rank=p, reduce_at=reduce_at)
        inputs = {n: _tagged(_stored(case["inputs"][n]), "replicated") for n in REPLICATED}
        observed = {n: _stored(case["observed"][n]) for n in case["observed"]}
    inputs["head_weight"] = _tagged(head, "replicated")
    inputs.update({k: _tagged(v, "partial") for k, v in part.items()})
    if own_logits and "logits" in observed:
        observed.update(_own_columns(observed["logits"], p, world))
    return attrs, inputs, observed


def _generator(world: int) -> str:
    return f"mtpcheck.capture.tp_vllm (vllm {_vllm_version()}, tp={world:d}, gloo)"


def merge_ranks(workdir: str, world: int, out: str, reduce_at: str = "moe",
                own_logits: bool = True) -> list[str]:
    """The per-rank files of run_ranks as one dump, one case per rank
    (FORMAT.md "Tensor-parallel steps"): `step0.rank<p>`, the captured step's
    inputs with `block_out` replaced by every rank's partial
    `block_out_parts [P, T, H]`, the head gathered whole from the shards,
    the rank's own outputs under observed/: with `own_logits`, only the
    logits columns of its own vocab shard (`logits_rows`), since the gathered
    columns were computed by the other ranks (DUMPS.md). The case ids
    written."""
    from ..dump import Dump

    pts = [torch.load(os.path.join(workdir, f"rank{p:d}.pt")) for p in range(world)]
    parts = {"block_out_parts": torch.stack([d["part"] for d in pts])}
    ids = []
    with Dump(out, generator=_generator(world),
              description=f"vLLM's DeepSeek V3 MTP step with tensor_parallel_size={world:d} on CPU "
                          "ranks, every rank captured") as dump:
        for p in range(world):
            attrs, inputs, observed = _rank_case(workdir, p, world, parts, pts[p]["head"],
                                                 reduce_at, own_logits)
            ids.append(f"step0.rank{p:d}")
            dump.case(ids[-1], op="mtp_step", family="deepseek_v3", attrs=attrs,
                      inputs=inputs, observed=observed)
    return ids


def write_rank_files(workdir: str, world: int, out_dir: str, reduce_at: str = "moe") -> list[str]:
    """The per-rank captures of run_ranks as one file per rank (FORMAT.md "One
    file per rank", merged by `mtpcheck verify`): `rank<p>.h5` with the root
    attributes tp_size and tp_rank, case `step0` holding the rank's own
    partial as `block_out_part` and its own logits columns. Their paths."""
    from ..dump import Dump, set_attr

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for p in range(world):
        d = torch.load(os.path.join(workdir, f"rank{p:d}.pt"))
        attrs, inputs, observed = _rank_case(workdir, p, world, {"block_out_part": d["part"]},
                                             d["head"], reduce_at, True)
        paths.append(os.path.join(out_dir, f"rank{p:d}.h5"))
        with Dump(paths[-1], generator=_generator(world),
                  description=f"rank {p:d} of vLLM's DeepSeek V3 MTP step with "
                              f"tensor_parallel_size={world:d} on CPU ranks") as dump:
            set_attr(dump.f, "tp_size", world)
            set_attr(dump.f, "tp_rank", p)
            dump.case("step0", op="mtp_step", family="deepseek_v3", attrs=attrs, inputs=inputs,
                      observed=observed)
    return paths


def _vllm_version() -> str:
    import vllm

    return str(getattr(vllm, "__version__", "?"))


def main(argv: list[str] | None = None) -> int:
    """python -m mtpcheck.capture.tp_vllm OUT.h5 [--drop-reduction-rank R]:
    the TP = 2 capture, merged into OUT.h5 (then `mtpcheck verify OUT.h5`);
    with --rank-files, OUT is a folder of rank files (`mtpcheck verify
    OUT/rank*.h5`)."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(prog="python -m mtpcheck.capture.tp_vllm")
    ap.add_argument("out")
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--drop-reduction-rank", type=int, default=-1,
                    help="remove this rank's block reduction (the ALLREDUCE_MISSING mutant)")
    ap.add_argument("--workdir", help="keep the per-rank files here (default: a temporary folder)")
    ap.add_argument("--rank-files", action="store_true",
                    help="OUT is a folder: one file per rank there (verify merges them)")
    ap.add_argument("--gathered-logits", action="store_true",
                    help="keep every rank's gathered logits whole (default: its own vocab shard)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        (d,) = run_ranks(a.workdir or tmp, a.tp, (("step", a.drop_reduction_rank),))
        if a.rank_files:
            print("\n".join(write_rank_files(d, a.tp, a.out)))
        else:
            print("\n".join(merge_ranks(d, a.tp, a.out, own_logits=not a.gathered_logits)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
