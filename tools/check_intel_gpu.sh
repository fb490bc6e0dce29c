#!/usr/bin/env bash
# For the owner of an Intel GPU with its Level Zero driver (and, ideally,
# its OpenCL driver): runs every line of the level_zero backend that has
# never run anywhere (docs/BACKENDS.md, "What ran where"), and the same
# SPIR-V through the GPU's OpenCL driver for comparison.
#   bash tools/check_intel_gpu.sh [BUILD_DIR]     (default: build-intel)
# Exit code: 0 when every step passed; otherwise the first failing step's.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-intel}
cmake -S . -B "$build" -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=OFF -DMTP_WITH_HIP=OFF \
	-DMTP_WITH_LEVEL_ZERO=ON -DMTP_WITH_OPENCL=AUTO >/dev/null || exit 2
cmake --build "$build" -j"$(nproc)" >/dev/null || exit 2
m=$build/mtpcheck
rc=0
step() {
	echo "== $*"
	"$@"
	local r=$?
	[ $r -eq 0 ] || [ $rc -ne 0 ] || rc=$r
}
# module, kernels, argument setting, launches, host copies, memory
step "$m" run --backend ref,level_zero --cases cases/nightly.case --isolate --timeout 600 \
	--json "$build/level_zero.json"
# device-to-device copy, global timestamps (the device timers)
step "$m" bench --backend level_zero --op rmsnorm,hc_pre --T 64,1024 --H 7168
# the same SPIR-V through the GPU's OpenCL driver, if it has one
if "$m" list backends | grep -q '^opencl .*module'; then
	step "$m" run --backend opencl:spirv@intel --cases cases/quick.case
fi
exit $rc
