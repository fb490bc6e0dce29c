#!/usr/bin/env bash
# The weight audit against vLLM 0.33.0's real loaders (docs/WEIGHTS.md):
# tiny DeepSeek V3 and GLM MTP models built from vLLM's classes on CPU, their
# own load_weights run over checkpoint-named zeros by mtpcheck.weights, and
# `mtpcheck audit-weights` on that mapping vs. its vllm@0.33 rules
# (python/tests_weights). Reuses the venv tools/ci/engines.sh builds
# (/opt/mtpcheck-venvs/vllm-0.33); when it is absent and cannot be
# installed: SKIPPED with the reason.
set -uo pipefail
cd "$(dirname "$0")/../.."
V=/opt/mtpcheck-venvs/vllm-0.33
if [ ! -f "$V/.complete" ]; then
	bash tools/ci/engines.sh >/tmp/mtpcheck-weights-engines.log 2>&1
	if [ ! -f "$V/.complete" ]; then
		echo "SKIPPED weights capture tests: no vllm 0.33 venv: $(grep SKIPPED /tmp/mtpcheck-weights-engines.log | tail -1)"
		exit 0
	fi
fi
if [ ! -x build/mtpcheck ]; then
	echo "weights capture tests need build/mtpcheck (tools/ci/test.sh builds it)"; exit 1
fi
"$V/bin/python" -m pip install -q --force-reinstall --no-deps ./python || exit 1
export MTPCHECK_BIN="$PWD/build/mtpcheck" MTPCHECK_ENGINE_TESTS=1 VLLM_TARGET_DEVICE=cpu
"$V/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests_weights
