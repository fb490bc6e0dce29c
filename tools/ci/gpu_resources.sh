#!/usr/bin/env bash
# Writes the CTest resource spec file (JSON, version 1.0) that lists this
# machine's GPUs, one slot each, so that `ctest -L nightly
# --resource-spec-file FILE -j N` runs the nightly shards (RESOURCE_GROUPS
# "gpus:1", tools/ci/on_gpu.sh) on every GPU at once, one shard per GPU at a
# time (docs/CI.md "Every GPU of one machine").
#   tools/ci/gpu_resources.sh [--count N] [OUT]   (default OUT: stdout)
# The count comes from nvidia-smi, else rocm-smi, else --count; with none
# of them it is an error (exit 2), never a spec with no GPU.
set -euo pipefail
count=""
if [ "${1:-}" = --count ]; then
	count=${2:-}
	shift 2 || true
	if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
		echo "gpu_resources.sh: --count '$count': expected a positive integer" >&2
		exit 2
	fi
fi
out=${1:-/dev/stdout}
if [ -z "$count" ] && command -v nvidia-smi >/dev/null; then
	count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if { [ -z "$count" ] || [ "$count" = 0 ]; } && command -v rocm-smi >/dev/null; then
	count=$(rocm-smi --showid 2>/dev/null | grep -cE '^GPU\[[0-9]+\]' || true)
fi
if [ -z "$count" ] || [ "$count" = 0 ]; then
	echo "gpu_resources.sh: no GPU found (nvidia-smi, rocm-smi): give --count N" >&2
	exit 2
fi
{
	printf '{\n  "version": {"major": 1, "minor": 0},\n  "local": [\n    {\n      "gpus": [\n'
	for ((i = 0; i < count; i++)); do
		sep=,
		[ "$i" = $((count - 1)) ] && sep=
		printf '        {"id": "%d", "slots": 1}%s\n' "$i" "$sep"
	done
	printf '      ]\n    }\n  ]\n}\n'
} >"$out"
