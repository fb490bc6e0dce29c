#!/usr/bin/env bash
# Runs a command on the GPU that CTest's resource allocation gave this test
# (issue 35: the nightly suite spread over a machine's GPUs). CTest, run with
# --resource-spec-file (tools/ci/gpu_resources.sh writes one), hands a test
# with RESOURCE_GROUPS "gpus:1" its GPU as
#   CTEST_RESOURCE_GROUP_COUNT=1  CTEST_RESOURCE_GROUP_0=gpus
#   CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1
# and this script turns that id into every backend's device variable
# (MTP_CUDA_DEVICE, MTP_HIP_DEVICE, MTP_OPENCL_DEVICE, MTP_L0_DEVICE), then
# runs the command. Without an allocation (ctest without a spec file, or the
# command run by hand) the variables already set are left alone.
#   tools/ci/on_gpu.sh COMMAND [ARG...]
set -euo pipefail
if [ $# -eq 0 ]; then
	echo "on_gpu.sh: usage: on_gpu.sh COMMAND [ARG...]" >&2
	exit 2
fi
if [ "${CTEST_RESOURCE_GROUP_COUNT:-0}" != 0 ]; then
	if [ "${CTEST_RESOURCE_GROUP_COUNT}" != 1 ] || [ "${CTEST_RESOURCE_GROUP_0:-}" != gpus ]; then
		echo "on_gpu.sh: CTEST_RESOURCE_GROUP_COUNT=${CTEST_RESOURCE_GROUP_COUNT}, CTEST_RESOURCE_GROUP_0=${CTEST_RESOURCE_GROUP_0:-}: expected one group of gpus" >&2
		exit 2
	fi
	alloc=${CTEST_RESOURCE_GROUP_0_GPUS:-}
	id=$(sed -n 's/^id:\([0-9][0-9]*\),slots:[0-9][0-9]*$/\1/p' <<<"$alloc")
	if [ -z "$id" ]; then
		echo "on_gpu.sh: CTEST_RESOURCE_GROUP_0_GPUS='$alloc': expected id:N,slots:M" >&2
		exit 2
	fi
	export MTP_CUDA_DEVICE=$id MTP_HIP_DEVICE=$id MTP_OPENCL_DEVICE=$id MTP_L0_DEVICE=$id
fi
exec "$@"
