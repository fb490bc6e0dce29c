#!/usr/bin/env bash
# The python backend beyond CTest (which runs the NumPy adapter and the bridge
# checks): the torch adapter, eager and under torch.compile, on the CPU through
# the embedded interpreter, when a venv with torch exists. It reuses the venv
# of tools/ci/engines.sh (or $MTP_TORCH_VENV); installing torch only for this
# would cost more than the whole CI, so without one it says SKIPPED and why.
# The venv's Python must be the one ./build's module embeds (3.11 on Debian 12).
set -uo pipefail
cd "$(dirname "$0")/../.."
m=./build/mtpcheck
if [ ! -f build/mtp_backend_python.so ]; then
	echo "SKIPPED: torch adapter: this build has no python backend ($m list backends)"
	exit 0
fi
venv=
for v in ${MTP_TORCH_VENV:-} /opt/mtpcheck-venvs/vllm-0.33; do
	if [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import torch' 2>/dev/null; then
		venv=$v
		break
	fi
done
if [ -z "$venv" ]; then
	echo "SKIPPED: torch adapter: no venv with torch (tools/ci/engines.sh makes /opt/mtpcheck-venvs/vllm-0.33, or set MTP_TORCH_VENV)"
	exit 0
fi
export MTP_PYTHON=$venv/bin/python MTP_TORCH_DEVICE=cpu
# the torch kit's e4m3 rounding (torch's float8 cast after the clamp) against
# the spec's, beside the NumPy kit's
"$venv/bin/python" kernels/python/tests/test_rounding.py || {
	echo "torch adapter: e4m3 rounding differs from SPEC.md §12.2"
	exit 1
}
for mode in eager compile; do
	# compile: one graph per op and attribute set, 10 s to minutes each on
	# 2 cores (hc_pre's 20 unrolled Sinkhorn iterations are the slowest):
	# five cases, a norm, the overflow rows, a whole V3 step, a W8A8 FP8
	# projection and a captured-block V3 step with declared conventions
	filter=
	[ $mode = compile ] && filter="--filter rmsnorm.bf16.fused.T1.H64,add_rmsnorm.bf16.eager.edge_overflow.T6.H64,mtp_step.deepseek_v3.bf16.eager.T1.H64,eh_proj.bf16.fp8_w8a8.e8m0s.T5.H160,step.v3.conv.fused_sum.ok"
	log=/tmp/mtp-torch-$mode.log
	# every op but DSpark's (SPEC.md §13), which the adapters lack yet
	MTPCHECK=$m timeout 900 sh kernels/python/tests/adapter_suite.sh \
		python:mtpcheck.adapters.torch:$mode $filter >$log 2>&1
	rc=$?
	grep -m1 '^mtpcheck run:' $log || tail -1 $log
	# every op run is implemented: an UNIMPLEMENTED case is a failure here
	if grep -q 'UNIMPLEMENTED' $log; then
		grep 'UNIMPLEMENTED' $log | head -5
		echo "torch adapter ($mode): UNIMPLEMENTED cases"
		exit 1
	fi
	if [ $rc = 125 ]; then
		# a venv with torch is there: a backend that cannot open on it
		# (another interpreter than the module embeds, say) is a failure
		echo "torch adapter ($mode): nothing ran although $venv has torch: $(grep -m1 SKIPPED $log)"
		exit 1
	elif [ $rc != 0 ]; then
		grep -v PASSED $log | tail -30
		echo "torch adapter ($mode) failed (exit $rc)"
		exit 1
	fi
done
