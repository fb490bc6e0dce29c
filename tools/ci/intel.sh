#!/usr/bin/env bash
# The quick suite on Intel's own OpenCL runtime (the CPU runtime Intel
# publishes on PyPI), both from the OpenCL C source (`opencl@intel`) and
# from the SPIR-V module that the level_zero backend submits
# (`opencl:spirv@intel`), and the level_zero module itself over a
# stand-in driver on that runtime (`level_zero` with
# libmtp_ze_on_cl.so preloaded); PoCL runs the OpenCL C source in CTest
# (suite.opencl). Two compilers agreeing with the reference, one of them
# Intel's on the very SPIR-V that Level Zero gets, is the evidence
# docs/BACKENDS.md cites for the Intel path.
#
# The runtime (~0.85 GB) is installed once into a venv that later runs
# reuse; the ICD file naming it goes into a private vendors folder, so the
# system's ICDs (PoCL) are untouched. When it cannot be installed the step
# says `SKIPPED: <reason>` and does not fail; a suite failure fails it.
#   bash tools/ci/intel.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
venv=${MTP_INTEL_OCL_VENV:-/opt/mtpcheck-venvs/intel-ocl}
log=$(mktemp /tmp/mtp-intel.XXXXXX)
vendors=""
trap 'rm -rf "$log" "$log.f" $vendors' EXIT

skip() {
	echo "intel: SKIPPED: $*"
	exit 0
}

install_runtime() {
	# a venv without the marker is an interrupted install: start again
	[ -f "$venv/.mtpcheck-complete" ] && return 0
	echo "intel: installing intel-opencl-rt into $venv (once, ~0.85 GB)"
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")" >"$log" 2>&1 || return 1
	/usr/bin/python3 -m venv "$venv" >>"$log" 2>&1 || return 1
	"$venv/bin/pip" install -q intel-opencl-rt intel-cmplr-lib-rt >>"$log" 2>&1 || return 1
	[ -f "$venv/lib/libintelocl.so" ] || { echo "no lib/libintelocl.so in the wheels" >>"$log"; return 1; }
	touch "$venv/.mtpcheck-complete"
}

echo "== Intel's OpenCL runtime: the quick suite from OpenCL C source and from the Level Zero SPIR-V"
[ -x "$build/mtpcheck" ] || skip "no $build/mtpcheck (build first)"
[ -f "$build/mtp_backend_opencl.so" ] || skip "this build has no opencl backend"
install_runtime || skip "cannot install Intel's OpenCL runtime from PyPI: $(tail -1 "$log")"

vendors=$(mktemp -d /tmp/mtp-intel-icd.XXXXXX)
echo "$venv/lib/libintelocl.so" >"$vendors/intel.icd"
export OCL_ICD_VENDORS=$vendors
export LD_LIBRARY_PATH=$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# the device lines (platform, device, and where the program came from)
"$build/mtpcheck" bench --backend opencl@intel,opencl:spirv@intel --op rmsnorm --T 1 --H 64 \
	--reps 1 --min-time 0 --no-unfused 2>&1 | grep '^backend' || true

# level_zero: the real module over a stand-in Level Zero driver on this
# runtime (kernels/level_zero/tests/ze_on_cl.c), when the build has both
runs=(opencl@intel opencl:spirv@intel)
shim=$(cd "$build" && pwd)/libmtp_ze_on_cl.so
if [ -f "$shim" ] && [ -f "$build/mtp_backend_level_zero.so" ]; then
	runs+=(level_zero)
else
	echo "intel: level_zero over ze_on_cl: SKIPPED: this build has no level_zero module or no libmtp_ze_on_cl.so"
fi

status=0
for b in "${runs[@]}"; do
	rc=0
	pre=""
	[ "$b" = level_zero ] && pre=$shim
	LD_PRELOAD=$pre "$build/mtpcheck" run --backend "$b" --cases cases/quick.case >"$log" 2>&1 || rc=$?
	case $rc in
	0) echo "intel: $b: $(grep -m1 '^mtpcheck run:' "$log")"
		# a worker lost while it opened and started again: said, not hidden
		grep -E '^backend .*starting it once more|^mtpcheck worker:' "$log" || true ;;
	# the runtime installed, so a backend that cannot open on it is a failure
	125) echo "intel: $b: FAILED: the runtime is installed but nothing ran:" \
		"$(grep -m1 "^backend $b: SKIPPED" "$log" || tail -1 "$log")"; status=1 ;;
	*) # the first lines say how it began (a lost open, the worker's own
		# last words on stderr), the last ones how it ended
		grep -v ' PASSED ' "$log" >"$log.f" || true
		if [ "$(wc -l <"$log.f")" -le 40 ]; then cat "$log.f"
		else head -15 "$log.f"; echo "..."; tail -25 "$log.f"; fi
		echo "intel: $b: FAILED (exit $rc)"; status=1 ;;
	esac
done
exit $status
