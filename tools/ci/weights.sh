#!/usr/bin/env bash
# The weight audit against vLLM 0.33.0's real loaders (docs/WEIGHTS.md):
# tiny DeepSeek V3, V3.2, GLM-4.5, GLM-5, V4-Flash and V4-Pro MTP models
# (bf16, block FP8, FP8 / MXFP4 V4 experts, compressed-tensors FP8; V3.2 /
# GLM-5 also with the CUDA platform's MTP class) built from vLLM's classes
# on CPU, their own load_weights run over
# checkpoint-named zeros by mtpcheck.weights, and `mtpcheck audit-weights`
# on that mapping vs. its vllm@0.33 rules, also on safetensors checkpoint
# folders (--checkpoint; python/tests/weights); then the command line once.
# Reuses the venv tools/ci/engines.sh builds
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
"$V/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests/weights || exit 1
# the command line: a capture, and the audit line it prints (exit 0: clean)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line=$("$V/bin/python" -m mtpcheck.weights --family glm5 --quant ct-fp8 --out "$tmp" 2>"$tmp/err" |
	grep '^mtpcheck audit-weights') || { tail -3 "$tmp/err"; echo "weights: capture CLI failed"; exit 1; }
build/mtpcheck ${line#mtpcheck } >"$tmp/audit.txt" || { cat "$tmp/audit.txt"; echo "weights: the printed audit failed"; exit 1; }
echo "weights CLI: $(tail -1 "$tmp/audit.txt")"
# vLLM 0.23 (docs/WEIGHTS.md): every family under its own rules (about 15 s
# of tests), only from a cached venv; installing one (~17 min, 8 GB) is left
# out of CI
V23=/opt/mtpcheck-venvs/vllm-0.23
if [ -f "$V23/.complete" ]; then
	"$V23/bin/python" -m pip install -q --force-reinstall --no-deps ./python || exit 1
	"$V23/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests/weights || exit 1
else
	echo "SKIPPED weights capture tests on vllm 0.23: no cached venv at $V23 (manual install: docs/WEIGHTS.md)"
fi
