#!/usr/bin/env bash
# Run after tools/bench/h200_tc.sh in the same tree (it reuses ./build):
# one bench row per op (T = 64, H = 4096, graph replay, the rows that
# h200_validate.sh takes from an earlier tree, compared offline), eh_proj at
# T = 64 and 512, H = 7168 judged by `mtpcheck run` on cuda and torch eager
# (the worst element and its threshold in the JSON), and
# tools/bench/gemm_acc.py (cuBLAS's bf16 GEMM against float64).
# Logs into $OUT/h200_more.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_more 230
m=./build/mtpcheck
[ -x $m ] || exit 1
cstep bench_after 60 $m bench --backend cuda --op "$($m list ops | awk '{print $1}' | paste -sd, -)" --T 64 --H 4096 \
	--graph --no-unfused --min-time 0.02 --json "$out/bench-after.json"
cstep gemm_acc 30 $py tools/bench/gemm_acc.py
printf 'op=eh_proj family=deepseek_v3 T=64,512 H=7168 tags=h200\n' >"$out/eh.case"
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
cstep eh_proj 140 $m run --backend cuda,python:mtpcheck.adapters.torch:eager --cases "$out/eh.case" \
	--json "$out/eh.json"
python3 - "$out/eh.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"eh.json: {e}")
for r in j["results"]:
    print(r["backend"], r["case"], r["verdict"], (r.get("message") or "")[:160])
    for o in r.get("outputs", []):
        print("   ", o.get("tensor"), "bad", o.get("bad"), "of", o.get("elements"), "headroom", o.get("headroom"),
              "worst", o.get("worst_index"), o.get("worst_got"), o.get("worst_want"), "max_abs", o.get("max_abs"),
              "ulp", o.get("ulp_histogram"), "thr", o.get("threshold"))
PY
echo "total $SECONDS s"
