#!/usr/bin/env bash
# Run after tools/bench/h200_auto.sh in the same warm machine (it reuses
# ./build, with the python backend on the image's torch; a cold machine
# builds first): the torch.compile quick suite in
# 16 shards (inductor's division rounding on, see python/mtpcheck/adapters/
# torch.py), and the side-by-side rows still missing from docs/BENCHMARKS.md
# (lm_head and embed at V = 1024 and T = 1..4096, mtp_step at T = 1..64: the
# scalar reference's eh_proj makes larger steps minutes long; the T = 16384
# column is h200_auto.sh's): cuda, torch eager and torch.compile in one
# process.
# Logs into $OUT/h200_torch.tgz.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_torch 580
m=./build/mtpcheck
[ -f build/mtp_backend_python.so ] || cstep_build 110
[ -f build/mtp_backend_python.so ] || { echo "no python backend in ./build"; exit 1; }
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
eager=python:mtpcheck.adapters.torch:eager
compiled=python:mtpcheck.adapters.torch:compile
cstep torch_compile 280 sh -c "for i in \$(seq 0 15); do
	$m run --backend $compiled --shard \$i/16 --json $out/torch-compile-\$i.json \
		>$out/torch-compile-\$i.txt 2>&1 & done; wait; tail -qn1 $out/torch-compile-*.txt"
grep -h "FAILED\|CRASHED\|TIMEOUT\|INVALID" "$out"/torch-compile-*.txt | grep "^\[" | cut -c1-240 | head -20
bench="$m bench --backend cuda,$eager,$compiled --H 7168 --M 4 --graph --min-time 0.05"
cstep side_small 100 $bench --op lm_head,embed,mtp_step --T 1,8,64 --json "$out/side-small.json"
cstep side_mid 60 $bench --op lm_head,embed --T 512,4096 --json "$out/side-mid.json"
cat "$out"/side_*.txt | grep -E "^(hc_|rmsnorm|add_rms|lm_head|embed|mtp_|  same|cuda: |python)" >"$out/side_rows.txt"
cat "$out/side_rows.txt"
echo "total $SECONDS s"
