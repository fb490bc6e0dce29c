#!/usr/bin/env bash
# The nightly suite spread over a machine's GPUs (issue 35, docs/CI.md
# "Every GPU of one machine"), checked without a GPU: tools/ci/on_gpu.sh
# turns CTest's allocation into the backends' device variables and refuses a
# malformed one (exit 2); tools/ci/gpu_resources.sh writes a spec file that
# CTest itself accepts, and with it CTest runs four one-GPU tests on two
# "GPUs" two at a time, each test on its own GPU, both GPUs used.
#   gpu_shards.sh SRC_DIR
set -euo pipefail
src=$1
on=$src/tools/ci/on_gpu.sh
res=$src/tools/ci/gpu_resources.sh
tmp=$(mktemp -d /tmp/mtp-gpu-shards.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "gpu_shards: FAILED: $*"
	exit 1
}

# 1. the mapping, and the refusals
got=$(CTEST_RESOURCE_GROUP_COUNT=1 CTEST_RESOURCE_GROUP_0=gpus \
	CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1 "$on" env | grep -E '^MTP_(CUDA|HIP|OPENCL|L0)_DEVICE=' | sort | xargs)
[ "$got" = "MTP_CUDA_DEVICE=3 MTP_HIP_DEVICE=3 MTP_L0_DEVICE=3 MTP_OPENCL_DEVICE=3" ] ||
	fail "allocation id:3 gave '$got'"
got=$(env -u CTEST_RESOURCE_GROUP_COUNT MTP_CUDA_DEVICE=5 "$on" printenv MTP_CUDA_DEVICE)
[ "$got" = 5 ] || fail "no allocation: MTP_CUDA_DEVICE became '$got', not left at 5"
for bad in "id:x,slots:1" "" "id:1"; do
	rc=0
	CTEST_RESOURCE_GROUP_COUNT=1 CTEST_RESOURCE_GROUP_0=gpus \
		CTEST_RESOURCE_GROUP_0_GPUS="$bad" "$on" true 2>"$tmp/err" || rc=$?
	[ $rc = 2 ] && grep -q CTEST_RESOURCE_GROUP_0_GPUS "$tmp/err" ||
		fail "allocation '$bad': exit $rc, $(cat "$tmp/err")"
done
rc=0
"$res" --count 0 >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "gpu_resources.sh --count 0: exit $rc, expected 2"

# 2. CTest with the spec: 4 one-GPU tests on 2 GPUs
"$res" --count 2 "$tmp/gpus.json"
mkdir "$tmp/proj" "$tmp/log"
cat >"$tmp/proj/CMakeLists.txt" <<CMK
cmake_minimum_required(VERSION 3.16)
project(shards NONE)
enable_testing()
foreach(i 0 1 2 3)
  add_test(NAME shard\${i} COMMAND "$on" bash -c
    "echo \\\$MTP_CUDA_DEVICE begin \\\$(date +%s.%N) >$tmp/log/\${i}; sleep 1; echo \\\$MTP_CUDA_DEVICE end \\\$(date +%s.%N) >>$tmp/log/\${i}")
  set_tests_properties(shard\${i} PROPERTIES RESOURCE_GROUPS "gpus:1")
endforeach()
CMK
cmake -S "$tmp/proj" -B "$tmp/build" >/dev/null
ctest --test-dir "$tmp/build" -j 4 --resource-spec-file "$tmp/gpus.json" >"$tmp/ctest.log" 2>&1 ||
	fail "ctest with the spec file: $(tail -5 "$tmp/ctest.log")"
python3 - "$tmp/log" <<'PY' || fail "the schedule"
import pathlib, sys
runs = []
for f in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    (dev, _, t0), (dev2, _, t1) = (ln.split() for ln in f.read_text().split("\n") if ln)
    assert dev == dev2 and dev in ("0", "1"), f"{f.name}: device {dev!r}"
    runs.append((dev, float(t0), float(t1)))
assert {r[0] for r in runs} == {"0", "1"}, f"devices used: {runs}"
for i, a in enumerate(runs):
    for b in runs[i + 1:]:
        if a[0] == b[0]:  # one GPU: never two at once
            assert a[2] <= b[1] or b[2] <= a[1], f"overlap on GPU {a[0]}: {a} {b}"
print(f"gpu_shards: 4 tests on 2 GPUs: {sorted(r[0] for r in runs)}, none overlapping on one GPU")
PY
echo "gpu_shards: PASSED"
