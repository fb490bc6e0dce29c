#!/usr/bin/env bash
# The H200 job of the mHC decode kernels (kernels/cuda/hc_decode.cu) and of
# the ROUNDING_BIAS count, in one device call of under 10 minutes:
#  1. build with CUDA for sm_90 (tests and python off);
#  2. the default suite on cuda with each hc path forced
#     (MTP_CUDA_HC_PATH=auto|decode|token|tile), and the real-size decode
#     cases below with each path forced;
#  3. the ROUNDING_BIAS count over the auto run (tools/bias/bias_count.py);
#  4. the mutant self-test over cuda;
#  5. compute-sanitizer memcheck and racecheck on the decode kernels;
#  6. the decode benchmark: 128 launches in one graph, each on its own
#     inputs, rotated over 256 MiB, the warm graph beside it and the empty
#     kernel's per-launch floor, for the new path and the per-token one;
#     the T = 512 norms the same way.
# Logs and JSON go into $OUT/h200_mhc.tgz ($OUT defaults to out/).
set -uo pipefail
dest=${OUT:-out}
out=$(mktemp -d /tmp/h200_mhc.XXXXXX)
mkdir -p "$dest"
trap 'tar -C "$out" -czf "$dest/h200_mhc.tgz" .' EXIT
. "$(dirname "$0")/step.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null
step build 200 sh -c "cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 \
	-DMTP_WITH_PYTHON=OFF && cmake --build build -j$(nproc)"
m=./build/mtpcheck
[ -x $m ] || exit 1
cp tools/bench/mhc_decode.case "$out/mhc.case"
for p in auto decode token tile; do
	step "quick_$p" 45 env MTP_CUDA_HC_PATH=$p $m run --backend cuda --json "$out/quick-$p.json"
	step "mhc_$p" 45 env MTP_CUDA_HC_PATH=$p $m run --backend cuda --cases "$out/mhc.case" --json "$out/mhc-$p.json"
done
python3 tools/bias/bias_count.py "$out/quick-auto.json" "$out/mhc-auto.json" | tee "$out/bias.txt"
step selftest 110 $m selftest --backend cuda --json "$out/selftest.json"
for tool in memcheck racecheck; do
	step "sanitizer_$tool" 60 env MTP_CUDA_HC_PATH=decode compute-sanitizer --tool $tool --error-exitcode 9 \
		$m run --backend cuda --cases "$out/mhc.case" --filter '*T8*'
done
bench="$m bench --backend cuda --H 7168 --M 4 --graph --no-unfused --min-time 0.05"
step bench_decode 120 env MTP_CUDA_EMPTY_BENCH=128 $bench --op hc_pre,hc_fused_post_pre,hc_head,hc_post \
	--T 1,8,64 --launches 128 --json "$out/bench-decode.json"
step bench_token 90 env MTP_CUDA_HC_PATH=token MTP_CUDA_EMPTY_BENCH=128 $bench --op hc_pre,hc_fused_post_pre,hc_head \
	--T 1,8,64 --launches 128 --json "$out/bench-token.json"
step bench_mid 60 $bench --op hc_pre,hc_head --T 256,512 --launches 16 --json "$out/bench-mid.json"
step bench_mid_decode 45 env MTP_CUDA_HC_PATH=decode $bench --op hc_pre,hc_head --T 256 --launches 16 \
	--json "$out/bench-mid-decode.json"
step bench_norms 45 $bench --op rmsnorm,add_rmsnorm --T 512 --launches 64 --json "$out/bench-norms.json"
cat "$out"/bench_*.txt | grep -E "^(hc_|rmsnorm|add_rms|  same|cuda: empty)" >"$out/bench_rows.txt"
echo "total $SECONDS s"
