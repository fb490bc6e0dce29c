#!/bin/bash
# Builds mtpcheck with the CUDA backend on a machine with an NVIDIA GPU and
# runs the CUDA checks in one go: the randomized self-test of every op, the
# fixture suite on ref and cuda (the default suite and the nightly composite
# cases), compute-sanitizer (memcheck on everything, racecheck and
# synccheck on the kernels with shared memory), and one bench row per op.
# Logs go to $OUT (default ./out). Run from the repository root:
#   kernels/cuda/device_check.sh [archs]
# A second source tree may be given in MTP_FALLBACK_TAR (a `git archive`
# tarball) for when the working tree does not build. MTP_BASELINE_TAR (a
# `git archive` tarball of an earlier tree, e.g. the commit before the GPU
# composition layer) is built too and benched first: the rows of this tree
# are then compared with it (FASTER / SLOWER / SAME per row, bench.md):
#   git archive -o base.tar REV && MTP_BASELINE_TAR=$PWD/base.tar kernels/cuda/device_check.sh
set -u
OUT=${OUT:-out}
ARCHS=${1:-90}
mkdir -p "$OUT"

build() { # source dir, build dir [log name]
	local opts="-DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=$ARCHS" log="$OUT/${3:-build.log}"

	cmake -S "$1" -B "$2" $opts >"$log" 2>&1 ||
		cmake -S "$1" -B "$2" $opts \
			-DHDF5_C_INCLUDE_DIR=/usr/include/hdf5/serial \
			-DHDF5_C_LIBRARY_hdf5=/usr/lib/x86_64-linux-gnu/hdf5/serial/libhdf5.so \
			>>"$log" 2>&1 || return 1
	cmake --build "$2" -j16 >>"$log" 2>&1
}

B=build
if ! build . build; then
	echo "working tree does not build:"; grep -m5 -E "error|Error" "$OUT/build.log"
	[ -n "${MTP_FALLBACK_TAR:-}" ] || exit 1
	mkdir -p /tmp/snap && tar -xf "$MTP_FALLBACK_TAR" -C /tmp/snap || exit 1
	B=/tmp/snapbuild
	build /tmp/snap $B || { echo "fallback does not build"; tail -20 "$OUT/build.log"; exit 1; }
	echo "built the fallback tree"
fi
grep -E "CUDA backend|HDF5  " "$OUT/build.log" | head -3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

$B/mtp_nv_selftest cuda >"$OUT/selftest.log" 2>&1
echo "selftest rc=$?"; grep -E "FAIL|UNIMPL|selftest:|backend" "$OUT/selftest.log" | head -40

$B/mtpcheck run --backend ref,cuda --fixtures fixtures/ --json "$OUT/cuda.json" >"$OUT/run.log" 2>&1
echo "run rc=$?"; grep -vE " PASSED | SKIPPED " "$OUT/run.log" | grep -E "^\[" | cut -c1-220 | head -60; tail -2 "$OUT/run.log"

$B/mtpcheck run --backend ref,cuda --cases cases/nightly.case --op mtp_step,draft_chain,mtp_block \
	--json "$OUT/nightly.json" >"$OUT/nightly.log" 2>&1
echo "nightly composites rc=$?"; grep -vE " PASSED | SKIPPED " "$OUT/nightly.log" | grep -E "^\[" | cut -c1-220 | head -20; tail -2 "$OUT/nightly.log"

san() { # log name, tool, command...
	local log=$1 tool=$2; shift 2
	timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" >>"$OUT/$log" 2>&1
	echo "$log: rc=$? $(grep -c -E '^========= (Invalid|Race|Barrier|Uninit|Error)' "$OUT/$log") reports; $(grep -m1 'ERROR SUMMARY' "$OUT/$log")"
}
san memcheck_selftest.log memcheck --leak-check full $B/mtp_nv_selftest cuda
san memcheck_fixtures.log memcheck $B/mtpcheck run --backend cuda --fixtures fixtures/
san racecheck.log racecheck $B/mtp_nv_selftest cuda hc_
san racecheck.log racecheck $B/mtp_nv_selftest cuda rmsnorm
san sync_init.log synccheck $B/mtp_nv_selftest cuda hc_
san sync_init.log initcheck $B/mtp_nv_selftest cuda norm

# One bench row per op (T = 64, H = 4096, graph replay), against the
# baseline tree's rows when MTP_BASELINE_TAR is given.
ops=$($B/mtpcheck list ops | awk '{print $1}' | paste -sd, -)
bench() { # mtpcheck, json, extra options...
	local bin=$1 json=$2; shift 2
	timeout 300 "$bin" bench --backend cuda --op "$ops" --T 64 --H 4096 --graph \
		--no-unfused --json "$json" "$@"
}
base=()
if [ -n "${MTP_BASELINE_TAR:-}" ]; then
	mkdir -p /tmp/basesrc && tar -xf "$MTP_BASELINE_TAR" -C /tmp/basesrc &&
		build /tmp/basesrc /tmp/basebuild build_before.log &&
		bench /tmp/basebuild/mtpcheck "$OUT/bench_before.json" >"$OUT/bench_before.log" 2>&1 &&
		base=(--baseline "$OUT/bench_before.json")
	echo "baseline bench rc=$? (${#base[@]} = 2: compared)"
fi
bench $B/mtpcheck "$OUT/bench.json" --md "$OUT/bench.md" "${base[@]}" >"$OUT/bench.log" 2>&1
echo "bench rc=$?"; cat "$OUT/bench.md" 2>/dev/null | head -40
