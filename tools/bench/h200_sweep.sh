#!/usr/bin/env bash
# The cells of issue 15's side-by-side grid (every op at T = 1 .. 16384,
# H = 7168) that earlier calls left empty: cuda, torch eager and
# torch.compile in one process per step, graph replay, checked against the
# reference except where the reference's GEMM would take minutes (eh_proj
# and eh_proj_hc at T >= 4096: --no-check, said in the docs). Each step
# prints its rows as it goes, so a step cut by its cap keeps the rows it
# timed. Logs into $OUT/h200_sweep.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_sweep 570
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
torch_on_cuda
bench="$side_bench --no-unfused"
all=1,8,64,512,4096,16384
cstep norms_a 130 $bench --op rmsnorm,add_rmsnorm,fused_eh_norm,mtp_shared_head_rmsnorm --T $all
cstep norms_b 130 $bench --op fused_embed_eh_norm,fused_mtp_input_rmsnorm,hc_post,all_reduce --T $all
cstep gemm_small 60 $bench --op eh_proj_hc --T 1,8,64,512
cstep gemm_big 60 $bench --op eh_proj,eh_proj_hc --T 4096,16384 --no-check
cstep vocab_16k 50 $bench --op lm_head,embed --T 16384
cstep composite 60 $bench --op mtp_block,draft_chain --T 1,8,64
echo "== summary (total $SECONDS s)"
cat "$out"/*.txt | grep -E "^[a-z_]+ +T=|CUT" | cut -c1-150
