#!/usr/bin/env bash
# The capture hooks on real engine code: vLLM 0.33.0 from PyPI (CPU, tiny
# DeepSeek V3 and GLM MTP models built from vLLM's own classes, attention
# replaced by a linear stand-in, dense MLP), captured with mtpcheck.capture and
# judged by `mtpcheck verify` (python/tests/test_vllm.py), and vLLM's own mHC
# kernels judged by `mtpcheck run` through python:vllm_mhc
# (python/tests/test_vllm_mhc.py, about 1 minute); DeepSeek V4's amd MTP module
# (python/tests/test_vllm_v4.py); the SGLang hooks, and V4's deferred contract
# with the cuda hc_head, on module trees mirroring theirs. The venv (about 7.5 GB, a few
# minutes to build) is cached in /opt/mtpcheck-venvs/vllm-0.33 and reused.
# Then the sweep of every built family (python -m mtpcheck.capture sweep)
# against docs/findings/vllm-0.33.0.json. Then the same for SGLang 0.5.23
# (venv /opt/mtpcheck-venvs/sglang-0.5.23, about 11 GB, 2.6 minutes to build;
# python/tests/test_sglang.py and the sweep against
# docs/findings/sglang-0.5.23.json). When a venv cannot be installed: SKIPPED
# with the reason, for that engine.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# install_venv DIR LOG "PIP ARGS" ...: a cached venv, each quoted argument one
# `pip install` in order; built under another name and moved when whole, so a
# killed install is never reused. Fails with the log's last line on stdout.
install_venv() {
	local dir=$1 log=$2 step
	shift 2
	[ -f "$dir/.complete" ] && return 0
	rm -rf "$dir" "$dir.partial"
	mkdir -p "$(dirname "$dir")"
	if ! (/usr/bin/python3 -m venv "$dir.partial" &&
		"$dir.partial/bin/python" -m pip install -q --upgrade pip &&
		for step in "$@"; do
			# shellcheck disable=SC2086 # one argument holds several requirements
			"$dir.partial/bin/python" -m pip install -q $step || exit 1
		done) >"$log" 2>&1; then
		tail -1 "$log"
		rm -rf "$dir.partial"
		return 1
	fi
	mv "$dir.partial" "$dir" && touch "$dir/.complete"
}

if [ ! -x build/mtpcheck ]; then
	echo "engine capture tests need build/mtpcheck (tools/ci/test.sh builds it)"; exit 1
fi
export MTPCHECK_BIN="$PWD/build/mtpcheck"
rc=0

# sweep_check VENV ENGINE COMMITTED: a fresh sweep compared with the committed
# findings; a changed verdict or diagnosis fails (docs/FINDINGS.md "Coverage").
sweep_check() {
	local out
	out=$(mktemp -d)
	if ! "$1/bin/python" -m mtpcheck.capture sweep --engine "$2" --out "$out" \
		--check "$3" >"$out/sweep.log" 2>&1; then
		tail -20 "$out/sweep.log"; echo "FAILED: the $2 sweep differs from $3"
		rc=1
	fi
	rm -rf "$out"
}

V=/opt/mtpcheck-venvs/vllm-0.33
if why=$(install_venv "$V" /tmp/mtpcheck-vllm-install.log "torch==2.14.0" \
	"vllm==0.33.0 torch==2.14.0 h5py pytest"); then
	"$V/bin/python" -m pip install -q --force-reinstall --no-deps ./python || exit 1
	MTPCHECK_ENGINE_TESTS=1 VLLM_TARGET_DEVICE=cpu \
		"$V/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests \
			--ignore=python/tests/weights || rc=1
	VLLM_TARGET_DEVICE=cpu sweep_check "$V" vllm docs/findings/vllm-0.33.0.json
else
	echo "SKIPPED vLLM capture tests: installing vllm==0.33.0 failed: $why"
fi

# SGLang 0.5.23 pins its own torch (2.14.1), so it has a venv of its own.
S=/opt/mtpcheck-venvs/sglang-0.5.23
if why=$(install_venv "$S" /tmp/mtpcheck-sglang-install.log "sglang==0.5.23 h5py pytest"); then
	"$S/bin/python" -m pip install -q --force-reinstall --no-deps ./python || exit 1
	MTPCHECK_SGLANG_TESTS=1 "$S/bin/python" -m pytest -q -rs -p no:cacheprovider \
		python/tests/test_sglang.py python/tests/test_sglang_gemma4_contract.py || rc=1
	sweep_check "$S" sglang docs/findings/sglang-0.5.23.json
else
	echo "SKIPPED SGLang capture tests: installing sglang==0.5.23 failed: $why"
fi
exit $rc
