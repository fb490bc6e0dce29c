#!/usr/bin/python3
"""One file per rank, merged by `mtpcheck verify` (FORMAT.md "One file per
rank"). Splits tools/gen/tp.py's one-file P = 4 dumps into rank files (the
form a capture with one writer per rank makes: root attributes tp_size and
tp_rank, the same case ids in every file, each holding only its own partial
as inputs/block_out_part [T, H]) and checks:

  good merge        `verify r0 r1 r2 r3` (any order) gives, per `<id>.rank<p>`,
                    the verdicts and diagnoses of the one-file dump: the ok
                    step PASSED, rank 1's reduction removed ALLREDUCE_MISSING
                    on rank 1 only; a one-file dump beside them is judged too
  a missing rank    three of four files: exit 2, one line naming a file and
                    tp_size
  a duplicated rank rank 0 twice: exit 2, naming tp_rank
  mismatched shapes rank 2's partial one column short: exit 2, naming the
                    file and block_out_part
  other case ids    a case renamed in one file: exit 2, naming the file
  no partial        rank 3's block_out_part removed: exit 2, naming it
  a case's tp_rank  not the file's: exit 2, naming the file and tp_rank
  tp_rank >= P      exit 2, naming the file and tp_rank
  a FIFO            beside the rank files: named (exit 2), never opened by
                    HDF5 (it would hang), the rank files still judged

  /usr/bin/python3 tools/gen/check_tp_ranks.py build/mtpcheck
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
P = 4
GROUPS = ("tp.ring.moe.P4.ok", "tp.ring.moe.P4.ALLREDUCE_MISSING_rank1")


def split(merged, groups, out_dir):
    """The cases `<g>.rank<p>` of merged as P rank files rank<p>.h5 in
    out_dir, case id `<g>` in each; their paths."""
    paths = []
    with h5py.File(merged, "r") as src:
        for p in range(P):
            path = os.path.join(out_dir, f"rank{p:d}.h5")
            with h5py.File(path, "w") as dst:
                for k, v in src.attrs.items():
                    dst.attrs[k] = v
                dst.attrs["tp_size"] = np.int64(P)
                dst.attrs["tp_rank"] = np.int64(p)
                for g in groups:
                    c = src["cases"][f"{g}.rank{p:d}"]
                    out = dst.create_group("cases/" + g)
                    for k, v in c.attrs.items():
                        out.attrs[k] = v
                    for part in c:
                        gp = out.create_group(part)
                        for name in c[part]:
                            d = c[part][name]
                            data = d[()]
                            if name == "block_out_parts":
                                name, data = "block_out_part", data[p]
                            nd = gp.create_dataset(name, data=data)
                            for k, v in d.attrs.items():
                                nd.attrs[k] = v
            paths.append(path)
    return paths


def verify(binary, paths, tmp):
    js = os.path.join(tmp, "r.json")
    if os.path.exists(js):
        os.remove(js)
    env = dict(os.environ, TMPDIR=tmp)  # the merged file goes there, and must go
    r = subprocess.run([binary, "verify", *paths, "--json", js], env=env, timeout=120, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace",
                       check=False)
    res = {}
    if os.path.exists(js):
        with open(js) as f:
            for x in json.load(f)["results"]:  # a merged case first, then the one-file dump's
                res.setdefault(x["case"], []).append(
                    (x["verdict"], (x.get("diagnosis") or {}).get("code")))
    return r.returncode, r.stdout, res


def bad(binary, paths, tmp, must, label, fails):
    rc, text, _ = verify(binary, paths, tmp)
    lines = [ln for ln in text.splitlines() if ln.startswith("mtpcheck: ")]
    if rc != 2 or len(lines) != 1 or not all(m in lines[0] for m in must):
        fails.append(f"{label}: want exit 2 and one line naming {must}; got {rc:d}:\n"
                     + text[-800:])


def main(argv):
    binary = argv[1]
    tmp = tempfile.mkdtemp(prefix="mtpcheck-tp-ranks-")
    fails = []
    try:
        merged = os.path.join(tmp, "tp_dumps.h5")
        subprocess.run([sys.executable, os.path.join(HERE, "tp.py"), "--dumps", merged],
                       check=True)
        _, _, one = verify(binary, [merged], tmp)
        want = {k: v[0] for k, v in one.items()}
        ranks = split(merged, GROUPS, tmp)
        rc, text, both = verify(binary, ranks[::-1] + [merged], tmp)  # any order
        got = {k: v[0] for k, v in both.items()}
        n = sum(len(v) for v in both.values())
        for g in GROUPS:
            for p in range(P):
                cid = f"{g}.rank{p:d}"
                if got.get(cid) != want[cid]:
                    fails.append(f"good merge: {cid} is {got.get(cid)}, the one-file dump's {want[cid]}")
        if got.get(GROUPS[1] + ".rank1") != ("FAILED", "ALLREDUCE_MISSING") or \
                got.get(GROUPS[0] + ".rank1") != ("PASSED", None):
            fails.append("good merge: the verdicts are not the expected ones:\n" + text[-800:])
        if n != len(want) + 2 * P or rc != 1:
            fails.append(f"good merge: {n:d} results (want {len(want) + 2 * P:d}), exit {rc:d}")
        bad(binary, ranks[:3], tmp, ("tp_size", "rank 3"), "a missing rank", fails)
        dup = os.path.join(tmp, "dup.h5")
        shutil.copy(ranks[0], dup)
        bad(binary, ranks + [dup], tmp, ("dup.h5", "tp_rank"), "a duplicated rank", fails)
        short = os.path.join(tmp, "short.h5")
        shutil.copy(ranks[2], short)
        with h5py.File(short, "a") as f:
            d = f["cases"][GROUPS[0]]["inputs"]
            data = d["block_out_part"][()][:, :-1]
            attrs = dict(d["block_out_part"].attrs)
            del d["block_out_part"]
            nd = d.create_dataset("block_out_part", data=data)
            for k, v in attrs.items():
                nd.attrs[k] = v
        bad(binary, ranks[:2] + [short, ranks[3]], tmp, ("short.h5", "block_out_part"),
            "mismatched shapes", fails)
        other = os.path.join(tmp, "other.h5")
        shutil.copy(ranks[1], other)
        with h5py.File(other, "a") as f:
            f.move("cases/" + GROUPS[0], "cases/tp.renamed")
        bad(binary, [ranks[0], other] + ranks[2:], tmp, ("other.h5", "/cases"),
            "other case ids", fails)
        nopart = os.path.join(tmp, "nopart.h5")
        shutil.copy(ranks[3], nopart)
        with h5py.File(nopart, "a") as f:
            del f["cases"][GROUPS[1]]["inputs"]["block_out_part"]
        bad(binary, ranks[:3] + [nopart], tmp, ("nopart.h5", "block_out_part"),
            "no partial", fails)
        caserank = os.path.join(tmp, "caserank.h5")
        shutil.copy(ranks[1], caserank)
        with h5py.File(caserank, "a") as f:
            f["cases"][GROUPS[0]].attrs["tp_rank"] = np.int64(2)
        bad(binary, [ranks[0], caserank] + ranks[2:], tmp, ("caserank.h5", "tp_rank"),
            "a case's tp_rank not the file's", fails)
        past = os.path.join(tmp, "past.h5")
        shutil.copy(ranks[3], past)
        with h5py.File(past, "a") as f:
            f.attrs["tp_rank"] = np.int64(P)
        bad(binary, ranks[:3] + [past], tmp, ("past.h5", "tp_rank"), "tp_rank >= tp_size", fails)
        fifo = os.path.join(tmp, "fifo.h5")  # never opened by HDF5: it would hang
        os.mkfifo(fifo)
        rc, text, both = verify(binary, [fifo, *ranks], tmp)
        if rc != 2 or "fifo.h5" not in text or len(both) != 2 * P:
            fails.append(f"a FIFO beside the rank files: exit {rc:d}, {len(both):d} results:\n"
                         + text[-800:])
        os.remove(fifo)
        left = [n for n in os.listdir(tmp) if n.startswith("mtpcheck-tp-")]
        if left:
            fails.append(f"merged files left behind: {left}")
    finally:
        shutil.rmtree(tmp)
    for f in fails:
        print("FAIL", f)
    print("tp_ranks: " + ("FAILED" if fails else "PASSED"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
