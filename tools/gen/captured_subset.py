#!/usr/bin/python3
"""Weights by row subset (FORMAT.md v2 rules 1-6): how a captured-block case
is rewritten as a dump that stores only some rows of its projections, head
and embedding table, as a real-size capture does.
"""

import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numerics as nx
from captured_engine import I64, Mat, Pending

# --------------------------------------------------------------------------- weights by subset

class Sub:
    """Rows `rows` of a weight [full_rows, in] as a dump stores them
    (FORMAT.md v2 rules 1, 2): the dataset holds those rows only and carries
    the attribute full_rows."""

    def __init__(self, data, full_rows, live=None):
        self.data, self.full_rows, self.live = data, full_rows, live


class LogitsAt:
    """A step's logits stored at `rows` only (rule 3), resolved at writing."""

    def __init__(self, pending, rows):
        self.pending, self.rows = pending, rows


def rows_name(weight):
    return weight[: -len("_weight")] + "_rows" if weight.endswith("_weight") else weight + "_rows"


def subset_rows(rng, n, keep, extra=()):
    """Sorted unique rows: a random `keep` of n, plus `extra`."""
    pick = rng.choice(n, size=keep, replace=False)
    return np.unique(np.concatenate([pick, np.asarray(extra, dtype=np.int64)])).astype(np.int64)


def whole_sha256(val, dt):
    """SHA-256 of the whole parameter in its storage encoding (rule 14)."""
    stored = val.bits.astype("<u2", copy=False) if isinstance(val, Mat) else nx.encode(val, dt)
    return hashlib.sha256(np.ascontiguousarray(stored).tobytes()).hexdigest()


def subset_weight(ins, name, rows, live=False):
    """inputs[name] (a Mat or stored float8 codes) at `rows`, with its rows;
    with `live`, the hash of the whole parameter."""
    val, dt = ins[name]
    full = val.shape[0]
    data = val.rows(rows) if isinstance(val, Mat) else val[rows]
    ins[name] = (Sub(data, full, whole_sha256(val, dt) if live else None), dt)
    ins[rows_name(name)] = (rows, I64)


def subsets(c, what, rng, live=False):
    """The dump of case c as it would be written with weights by subset:
    `proj` the projections (a quarter of the rows, the same for a V4 layer's
    e_proj and h_proj; float8 block scales kept whole, rule 11); `head` the
    head rows (a third, plus every token the engine emitted) and each step's
    logits at half of those (plus the tokens); `embed` only the rows of the
    ids the chain embeds (rule 4)."""
    ins, outs = c["inputs"], c["outputs"]
    layers = sorted({n.rsplit("/", 1)[0] + "/" if "/" in n else "" for n in ins
                     if n.endswith("enorm_weight")})
    if what in ("proj", "all"):
        for pfx in layers:
            names = [pfx + n for n in ("eh_proj_weight", "e_proj_weight", "h_proj_weight")
                     if pfx + n in ins]
            h = ins[names[0]][0].shape[0]
            rows = subset_rows(rng, h, h // 4)
            for n in names:
                subset_weight(ins, n, rows, live)
    if what in ("head", "all"):
        tokens = np.concatenate([o[0].token.ravel() if isinstance(o[0], Pending) else o[0].ravel()
                                 for n, o in outs.items() if n.endswith("token")])
        v = ins[layers[0] + "head_weight"][0].shape[0]
        rows = subset_rows(rng, v, min(v // 3, 4096), tokens)
        for pfx in layers:
            subset_weight(ins, pfx + "head_weight", rows, live)
        for n in [n for n in outs if n.endswith("logits")]:
            tok = outs[n[: -len("logits")] + "token"][0]
            tok = tok.token if isinstance(tok, Pending) else tok
            lr = np.unique(np.concatenate([rows[::2], tok.ravel()])).astype(np.int64)
            outs[n] = (LogitsAt(outs[n][0], lr), outs[n][1])
            outs[n + "_rows"] = (lr, I64)
    if what in ("embed", "all") and "embed_table" in ins:
        ids = np.concatenate([ins["input_ids"][0].ravel()] +
                             ([ins["next_tokens"][0].ravel()] if "next_tokens" in ins else []))
        subset_weight(ins, "embed_table", np.unique(ids).astype(np.int64), live)
    return c
