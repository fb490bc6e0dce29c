#!/usr/bin/env bash
# The H200 job (device tool): build with CUDA for sm_90, run the default
# suite on cuda, then the benchmark table of docs/BENCHMARKS.md. Results go to
# $OUT (or out/ when OUT is unset).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 >"$out/build.log" 2>&1 &&
	cmake --build build -j"$(nproc)" >>"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt" 2>&1
./build/mtpcheck run --backend cuda --json "$out/quick.json" >"$out/quick.txt" 2>&1
tail -3 "$out/quick.txt"
ops=rmsnorm,add_rmsnorm,fused_eh_norm,fused_mtp_input_rmsnorm,mtp_shared_head_rmsnorm,hc_post,hc_head,hc_pre
./build/mtpcheck bench --backend cuda --op "$ops" --T 1,8,64,512,4096,16384 --H 4096,7168 --M 4 \
	--json "$out/bench.json" 2>&1 | tee "$out/bench.txt"
./build/mtpcheck bench --backend cuda --op "$ops" --T 1 --H 7168 --warm --no-unfused --no-check \
	--json "$out/bench_warm_t1.json" 2>&1 | tee "$out/bench_warm_t1.txt"
