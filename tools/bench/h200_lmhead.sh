#!/usr/bin/env bash
# A third H200 call after h200_side.sh: lm_head on cuda at T = 64, 512 and
# 4096 (H = 7168) with the judge's float32 accumulation allowance for the
# logits (their check FAILED at 512 and 4096 without it), timed and judged
# by run -v, and the hc_fused_post_pre T = 16384 row against torch eager
# and torch.compile that h200_side.sh's cap cut.
# Logs into $OUT/h200_lmhead.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_lmhead 420
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
cstep lm_head 60 $m bench --backend cuda --op lm_head --H 7168 --T 64,512,4096 --graph --min-time 0.05 \
	--json "$out/lm-head.json"
echo "op=lm_head T=64,512,4096 H=7168 V=1024 tags=h200" >"$out/lm_head.case"
cstep lm_run 60 $m run --backend cuda --cases "$out/lm_head.case" -v
torch_on_cuda
cstep side_16k 240 $side_bench --op hc_fused_post_pre --T 16384 --json "$out/side-16k.json"
echo "== summary (total $SECONDS s)"
grep -E "PASSED|FAILED|logits " "$out/lm_run.txt" | cut -c1-250
cat "$out"/lm_head.txt "$out"/side_16k.txt | grep -E "^(hc_|lm_head)|CUT" | cut -c1-150
