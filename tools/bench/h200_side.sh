#!/usr/bin/env bash
# The second H200 call after h200_torch.sh (run right after it, on the warm
# machine that has ./build): the cuda mutant self-test (a mutant that
# changes nothing on cuda's UNIMPLEMENTED cases is NOT APPLICABLE since
# 2026-12-01), then the side-by-side rows still missing from
# docs/BENCHMARKS.md: lm_head and embed at V = 1024, T = 1..4096, mtp_step
# at T = 1..512, hc_fused_post_pre at T = 16384: cuda, torch eager and
# torch.compile in one process. Logs into $OUT/h200_side.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_side 570
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
cstep selftest 90 $m selftest --backend cuda --json "$out/selftest.json"
torch_on_cuda
cstep side_small 110 $side_bench --op lm_head,embed,mtp_step --T 1,8,64 --json "$out/side-small.json"
cstep side_mid 90 $side_bench --op lm_head,embed,mtp_step --T 512 --json "$out/side-mid.json"
cstep side_4k 60 $side_bench --op lm_head,embed --T 4096 --json "$out/side-4k.json"
cstep side_16k 80 $side_bench --op hc_fused_post_pre --T 16384 --json "$out/side-16k.json"
echo "== summary (total $SECONDS s)"
grep -hE "selftest|mutant|FAIL" "$out/selftest.txt" 2>/dev/null | tail -6
cat "$out"/side_*.txt | grep -E "^(hc_|lm_head|embed|mtp_)|CUT" | cut -c1-150
