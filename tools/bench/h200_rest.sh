#!/usr/bin/env bash
# The last empty cells of issue 15's side-by-side grid (docs/BENCHMARKS.md
# "Still unmeasured side by side") and the row-per-block CUDA embed gather:
# build; the cuda quick suite (the gather's cases and every op that embeds);
# the gather side by side at every T; then hc_post at T = 8..512,
# all_reduce and draft_chain at every T, mtp_step at T = 4096 and 16384, the
# two norms left at T = 16384. cuda, torch eager and torch.compile in one
# process per step, graph replay, checked against the reference except at
# T >= 4096 for the ops that hold eh_proj (its scalar GEMM takes minutes
# there: --no-check, said in the docs). Rows print as they are timed, so a
# step cut by its cap keeps what it timed; STEPS="..." reruns some steps.
# Logs into $OUT/h200_rest.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_rest 575
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
cstep quick 50 $m run --backend cuda -q --json "$out/quick.json"
torch_on_cuda
bench="$side_bench --no-unfused"
all=1,8,64,512,4096,16384
cstep embed 45 $bench --op embed --T $all
cstep hc_post 35 $bench --op hc_post --T 8,64,512
cstep all_reduce 50 $bench --op all_reduce --T $all
cstep head_norm_16k 45 $bench --op mtp_shared_head_rmsnorm --T 16384
cstep chain_decode 80 $bench --op draft_chain --T 1,8,64
cstep step_big 60 $bench --op mtp_step --T 4096,16384 --no-check
cstep chain_big 60 $bench --op draft_chain --T 4096,16384 --no-check
# the two cells the first call's caps cut (2026-12-03): STEPS="input_norm_16k
# chain_512" BUDGET=300 measures them alone
cstep input_norm_16k 100 $bench --op fused_mtp_input_rmsnorm --T 16384
cstep chain_512 150 $bench --op draft_chain --T 512
# the gather with DeepSeek's vocabulary, whose 1.85 GB table does not fit in
# L2 (V = 1024's 14.7 MB does); unchecked (drawing and checking the table
# on the host takes most of a minute a shape; checked `ok` at T = 1 on
# 2026-12-03): STEPS="quick all_reduce embed_vocab" after the all_reduce
# vectors
cstep embed_vocab 170 $bench --op embed --V 129280 --T 4096,16384 --no-check
# the synthetic block at prefill sizes (earlier grids stopped at T = 64)
cstep block_big 150 sh -c "$bench --op mtp_block --T 512 && $bench --op mtp_block --T 4096,16384 --no-check"
echo "== summary (total $SECONDS s)"
verdicts quick
cat "$out"/*.txt | grep -E "^[a-z_]+ +T=|CUT" | cut -c1-150
