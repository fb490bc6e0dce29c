#!/usr/bin/env bash
# One H200 call (2026-12-02, fourth session, issue 16; run then with
# hc_pre's tc threshold at 256, docs/BENCHMARKS.md): build (cuda + python);
# the quick suite and the threshold edges (mhc_auto.case, now the edges of
# the thresholds it led to) under auto; hc_pre timed with each path forced
# between the decode and tc thresholds (T = 128, 192), hc_head's split tc
# path against per-token from T = 256 to 16384, and the T = 16384
# side-by-side rows against torch. Logs into $OUT/h200_auto.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_auto 585
cstep_build 110
cstep quick_auto 30 $m run --backend cuda -q
cstep edges_auto 45 $m run --backend cuda --cases tools/bench/mhc_auto.case
b="$m bench --backend cuda --H 7168 --M 4 --graph --no-unfused --min-time 0.03"
for p in decode tc token; do
	cstep pre_$p 25 env MTP_CUDA_HC_PATH=$p $b --op hc_pre --T 128,192
done
for p in tc token; do
	cstep head_$p 85 env MTP_CUDA_HC_PATH=$p $b --op hc_head --T 256,1024,4096,16384
done
# the T = 16384 column of the side-by-side table (docs/BENCHMARKS.md):
# cuda (under auto), torch eager and torch.compile in one process
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
cstep side_16k 160 $m bench --backend cuda,python:mtpcheck.adapters.torch:eager,python:mtpcheck.adapters.torch:compile \
	--H 7168 --M 4 --graph --min-time 0.05 --op hc_pre,hc_head,hc_post,hc_fused_post_pre,rmsnorm,add_rmsnorm \
	--T 16384 --json "$out/side-16k.json"
echo "== summary (total $SECONDS s)"
verdicts quick_auto edges_auto
for f in pre_decode pre_tc pre_token head_tc head_token; do
	echo "-- $f"; grep -E "^ *hc_(pre|head) |CUT" "$out/$f.txt" | cut -c1-150
done
grep -E "^(hc_|rmsnorm|add_rms)|CUT" "$out/side_16k.txt" | cut -c1-150
