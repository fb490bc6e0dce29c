#!/usr/bin/env bash
# One H200 call for what issue 15 and the fourth session's thresholds still
# need (docs/BENCHMARKS.md): build (cuda + python, skipped on a warm machine
# that has it); the quick suite and the path edges (mhc_auto.case) under
# auto with hc_pre's tc from 128 and hc_head's from 2048; the torch.compile
# quick suite in 16 shards (inductor's division rounding on, see
# python/mtpcheck/adapters/torch.py); the side-by-side rows still missing:
# lm_head and embed at V = 1024, T = 1..4096, mtp_step at T = 1..512 (the
# reference's threaded eh_proj checks T = 512 in seconds on 16 cores) and
# hc_fused_post_pre at T = 16384: cuda, torch eager and torch.compile in one
# process. Logs into $OUT/h200_torch.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_torch 575
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
[ -f build/mtp_backend_python.so ] || { echo "no python backend in ./build"; exit 1; }
cstep quick_auto 30 $m run --backend cuda -q
cstep edges_auto 45 $m run --backend cuda --cases tools/bench/mhc_auto.case
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
eager=python:mtpcheck.adapters.torch:eager
compiled=python:mtpcheck.adapters.torch:compile
# one inductor compile thread a shard: 16 shards fill the 16 cores, and a
# compile worker pool signalled with its shard can leave the shard waiting
# on it; each shard ends on its own SIGTERM (its case in flight finished,
# its JSON closed) before the step's
cstep torch_compile 270 env TORCHINDUCTOR_COMPILE_THREADS=1 sh -c "for i in \$(seq 0 15); do
	timeout -k 10 240 $m run --backend $compiled --shard \$i/16 --json $out/torch-compile-\$i.json \
		>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
grep -h "FAILED\|CRASHED\|TIMEOUT\|INVALID" "$out"/torch-compile-*.txt | grep "^\[" | cut -c1-240 | head -20
bench="$m bench --backend cuda,$eager,$compiled --H 7168 --M 4 --graph --min-time 0.05"
cstep side_small 80 $bench --op lm_head,embed,mtp_step --T 1,8,64 --json "$out/side-small.json"
cstep side_mid 60 $bench --op lm_head,embed,mtp_step --T 512 --json "$out/side-mid.json"
cstep side_4k 40 $bench --op lm_head,embed --T 4096 --json "$out/side-4k.json"
cstep side_16k 40 $bench --op hc_fused_post_pre --T 16384 --json "$out/side-16k.json"
echo "== summary (total $SECONDS s)"
verdicts quick_auto edges_auto
cat "$out"/side_*.txt | grep -E "^(hc_|lm_head|embed|mtp_)|CUT" | cut -c1-150
