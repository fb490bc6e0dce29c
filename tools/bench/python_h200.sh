#!/usr/bin/env bash
# The H200 job for the python backend (device tool): our CUDA kernels side by
# side with the torch adapter (every op as torch code), eager and under
# torch.compile, in one mtpcheck process, same shapes, same timing engine
# (CUDA events), same checks. Results go to $OUT (or out/ when OUT is unset).
#
# Needs the image's torch venv (/opt/torch/.venv: torch 2.11, Triton 3.6,
# Python 3.12 with its libpython); PY=... picks another interpreter.
# Wall time: every step has its own limit so that the whole stays under
# 9 minutes (build 170 s, suites 60 + 90 s, benches 120 + 50 + 40 s); a step cut
# short leaves its .txt and says so. Trimmed to fit: the bench covers the 8
# memory-bound ops of tools/bench/h200.sh (not the GEMM and composite ops),
# T = 16384 runs without the reference check, and the compile suite runs
# only as far as its 90 s allow (one graph per op and attribute set, dynamic shapes).
set -uo pipefail
out=${OUT:-out}
py=${PY:-/opt/torch/.venv/bin/python}
mkdir -p "$out"
. "$(dirname "$0")/step.sh"
# its own build folder: build/ of tools/bench/h200.sh may hold another Python
step build 170 sh -c "cmake -S . -B build-py -U '_Python3*' -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON \
	-DMTP_CUDA_ARCHS=90 -DMTP_WITH_PYTHON=ON -DPython3_EXECUTABLE=$py && cmake --build build-py -j$(nproc)"
[ -f build-py/mtp_backend_python.so ] || { echo "no python backend built (see $out/build.txt)"; exit 1; }
"$py" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())' \
	>"$out/versions.txt" 2>&1
cat "$out/versions.txt"
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
eager=python:mtpcheck.adapters.torch:eager
compiled=python:mtpcheck.adapters.torch:compile
m=./build-py/mtpcheck

step suite_eager 60 $m run --backend $eager --json "$out/suite_eager.json"
step suite_compile 90 $m run --backend $compiled --json "$out/suite_compile.json"

ops=rmsnorm,add_rmsnorm,fused_eh_norm,fused_mtp_input_rmsnorm,mtp_shared_head_rmsnorm,hc_post,hc_head,hc_pre
# graph replay (kernels only; the cuda table of docs/BENCHMARKS.md is graph replay too)
step bench 120 $m bench --backend cuda,$eager,$compiled --op $ops --T 1,8,64,512,4096 --H 7168 --M 4 \
	--graph --no-unfused --min-time 0.1 --json "$out/bench.json"
step bench_t16384 50 $m bench --backend cuda,$eager,$compiled --op $ops --T 16384 --H 7168 --M 4 \
	--graph --no-unfused --no-check --min-time 0.1 --json "$out/bench_t16384.json"
# plain launches: what Python's dispatch adds when an engine does not capture graphs
step bench_launch 40 $m bench --backend cuda,$eager,$compiled --op $ops --T 1,4096 --H 7168 --M 4 \
	--no-unfused --no-check --min-time 0.1 --json "$out/bench_launch.json"
echo "total $SECONDS s"
