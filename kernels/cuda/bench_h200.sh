#!/usr/bin/env bash
# The CUDA backend's performance job on the H200 (device tool): builds only
# mtpcheck and this backend for sm_90, runs the default suite on cuda, then
# times the issue-5 ops under graph replay with the empty-kernel probe
# (MTP_CUDA_EMPTY_BENCH=1, printed to stderr). Logs go to $OUT (or out/).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 >"$out/build.log" 2>&1 &&
	cmake --build build -j"$(nproc)" --target mtpcheck mtp_backend_cuda >>"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
cuobjdump --dump-resource-usage build/mtp_backend_cuda.so 2>&1 |
	grep -A1 -E 'hcm_dots|norm_reg|add_norm_reg|hc_post_vec' | grep -oE 'Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+' |
	paste - - - - >"$out/resources.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt" 2>&1
timeout 150 ./build/mtpcheck run --backend cuda --json "$out/quick.json" >"$out/quick.txt" 2>&1
echo "suite rc=$?"; tail -3 "$out/quick.txt"
ops=${OPS:-rmsnorm,add_rmsnorm,fused_eh_norm,fused_mtp_input_rmsnorm,mtp_shared_head_rmsnorm,hc_post,hc_head,hc_pre}
MTP_CUDA_EMPTY_BENCH=1 timeout ${BENCH_S:-330} ./build/mtpcheck bench --backend cuda --graph --no-unfused --min-time 0.1 \
	--op "$ops" --T ${TS:-1,8,64,512,4096,16384} --H 4096,7168 --M 4 --json "$out/bench.json" >"$out/bench.txt" 2>&1
echo "bench rc=$?"
grep -E 'empty|copy bandwidth' "$out/bench.txt"
grep -vE '^\s*$' "$out/bench.txt" | cut -c1-150 | tail -110
