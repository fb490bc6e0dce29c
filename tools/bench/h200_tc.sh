#!/usr/bin/env bash
# One H200 call (under 10 minutes) for the tensor-core prefill path of
# hc_pre and hc_head (kernels/cuda/hc_tc.cu, issue 16): build (cuda, no
# python); the cuda selftest and the quick suite with MTP_CUDA_HC_PATH=tc
# and auto; the real-size cases (tools/bench/mhc_tc.case: T = 512, 1000,
# 4096 at H = 7168, M = 4) forced tc and auto; the split test
# (tools/bench/mhc_tc_bound.case: the split path must PASS, the mutant
# MTP_CUDA_TC_NOSPLIT=1 must FAIL hc_pre); compute-sanitizer memcheck and
# racecheck on the tc path at small T; the bench with tc and with the old
# paths (tile, token) side by side. Every step has a time cap inside BUDGET
# seconds; the logs are packed into $OUT/h200_tc.tgz on exit.
#
# Prediction (written before any run; H = 7168, M = 4, copy ~ 4.0 TB/s):
#  hc_pre moves x 235 MB + layer_input 59 MB at T = 4096 (294 MB: 73 us at
#  copy). The tensor work is 2 x 5.6 G multiply-adds (hi and lo), 11.3 G,
#  about 45 us at the dense TF32 peak, ~75 us at the 60 % mma.sync reaches;
#  it overlaps the x stream, and the last block of each 64-token tile
#  rereads 3.6 MB of x from L2 and writes layer_input, a tail of ~30-50 us
#  per launch. Predicted 120-140 us at T = 4096 (52-61 % of copy) and
#  460-540 us at T = 16384 (four launches of 4096 tokens; 54-64 %).
#  hc_head moves x 235 MB + y 59 MB too, with a quarter of the mma work
#  (one n8 tile, half of it padding): memory-bound, predicted 95-110 us at
#  T = 4096 (67-77 %) and 370-430 us at T = 16384 (68-79 %).
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_tc 330
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null
# the python backend too when the image's torch is there (tools/bench/h200_more.sh and the torch
# runs use the same build)
pyopt=
[ -x "$py" ] && pyopt="-DMTP_WITH_PYTHON=ON -DPython3_EXECUTABLE=$py"
cstep build 120 sh -c "cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 $pyopt \
	&& cmake --build build -j$(nproc)"
m=./build/mtpcheck
[ -x $m ] || exit 1
cp tools/bench/mhc_tc.case "$out/mhc.case"
cp tools/bench/mhc_tc_bound.case "$out/bound.case"
for p in tc auto; do
	cstep "selftest_$p" 30 env MTP_CUDA_HC_PATH=$p ./build/mtp_nv_selftest cuda
	cstep "quick_$p" 25 env MTP_CUDA_HC_PATH=$p $m run --backend cuda --json "$out/quick-$p.json"
	cstep "mhc_$p" 40 env MTP_CUDA_HC_PATH=$p $m run --backend cuda --cases "$out/mhc.case" \
		--json "$out/mhc-$p.json"
done
cstep bound_split 20 env MTP_CUDA_HC_PATH=tc $m run --backend cuda --cases "$out/bound.case" \
	--json "$out/bound-split.json"
cstep bound_nosplit 20 env MTP_CUDA_HC_PATH=tc MTP_CUDA_TC_NOSPLIT=1 $m run --backend cuda \
	--cases "$out/bound.case" --json "$out/bound-nosplit.json"
for tool in memcheck racecheck; do
	cstep "sanitizer_$tool" 25 env MTP_CUDA_HC_PATH=tc compute-sanitizer --tool $tool --error-exitcode 9 \
		$m run --backend cuda --cases "$out/mhc.case" --filter '*H1024*'
done
bench="$m bench --backend cuda --op hc_pre,hc_head,hc_post,hc_fused_post_pre --T 512,4096,16384 --H 7168 --M 4 \
	--graph --no-unfused --min-time 0.05"
for p in tc tile token; do
	cstep "bench_$p" 55 env MTP_CUDA_HC_PATH=$p $bench --json "$out/bench-$p.json"
done

# the summary: exit codes, pass counts, the mutant's FAILs, the bench rows
echo "== summary (total $SECONDS s)"
for f in "$out"/*.txt; do
	n=$(basename "$f" .txt)
	printf '%-20s PASSED %4s  FAILED %4s\n' "$n" "$(grep -c 'PASSED' "$f")" "$(grep -c 'FAILED' "$f")"
done
echo "bound: the split run must have 0 FAILED, the nosplit run FAILED hc_pre cases (hc_head passes both)"
grep 'FAILED' "$out/bound_nosplit.txt" 2>/dev/null | head -8
grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out"/sanitizer_*.txt 2>/dev/null
for p in tc tile token; do
	echo "-- bench, MTP_CUDA_HC_PATH=$p"
	grep -E "^(hc_|cuda: copy|  same)" "$out/bench_$p.txt" 2>/dev/null
done | tee "$out/bench_rows.txt"
