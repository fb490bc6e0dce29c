#!/usr/bin/env bash
# The first of two H200 calls for what issue 15 and the fourth session's
# thresholds still need (docs/BENCHMARKS.md); the second is h200_side.sh.
# Build (cuda + python, skipped on a warm machine that has it); the quick
# suite and the path edges (mhc_auto.case) under auto with hc_pre's tc from
# 128 and hc_head's from 2048, and the ROUNDING_BIAS count over both
# (tools/bias/bias_count.py); the torch.compile quick suite in 16 shards
# (inductor's division rounding on, see python/mtpcheck/adapters/torch.py)
# with all the time that is left. Logs into $OUT/h200_torch.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_torch 570
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
[ -f build/mtp_backend_python.so ] || { echo "no python backend in ./build"; exit 1; }
cstep quick_auto 40 $m run --backend cuda -q --json "$out/quick-auto.json"
cstep edges_auto 45 $m run --backend cuda --cases tools/bench/mhc_auto.case --json "$out/edges-auto.json"
cstep bias 20 python3 tools/bias/bias_count.py "$out/quick-auto.json" "$out/edges-auto.json"
torch_on_cuda
# one inductor compile thread a shard: 16 shards fill the 16 cores, and a
# compile worker pool signalled with its shard can leave the shard waiting
# on it; each shard ends on its own SIGTERM (its case in flight finished,
# its JSON closed) 30 s before the step's, and the step 25 s before the job's
lim=$((budget - SECONDS - 25))
cstep torch_compile $lim env TORCHINDUCTOR_COMPILE_THREADS=1 sh -c "for i in \$(seq 0 15); do
	timeout -k 10 $((lim - 30)) $m run --backend $compiled --shard \$i/16 --json $out/torch-compile-\$i.json \
		>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
echo "== summary (total $SECONDS s)"
verdicts quick_auto edges_auto
cat "$out/bias.txt" 2>/dev/null | tail -8
grep -h "FAILED\|CRASHED\|TIMEOUT\|INVALID" "$out"/torch-compile-*.txt | grep "^\[" | cut -c1-240 | head -20
tail -qn1 "$out"/torch-compile-*.txt
