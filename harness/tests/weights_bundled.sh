#!/usr/bin/env bash
# The bundled weight lists (fixtures/weights) audit clean under the command
# docs/WEIGHTS.md gives for them ("The bundled lists"): every documented
# `mtpcheck audit-weights ... fixtures/weights/...` line is run from the
# source tree and must exit 0 with no finding; both families must be there.
# Under the default engine the lists are not clean, and a hint names
# --engine spec.
# Usage: weights_bundled.sh MTPCHECK SOURCE_DIR
set -u
M=$1 SRC=$2
cd "$SRC" || exit 1
lines=$(grep -E '^mtpcheck audit-weights .*fixtures/weights/' docs/WEIGHTS.md)
for fam in deepseek_v4 deepseek_v3; do
	grep -q -- "--family $fam " <<<"$lines" ||
		{ echo "FAIL: docs/WEIGHTS.md documents no command for the bundled $fam lists"; exit 1; }
done
while read -r line; do
	# shellcheck disable=SC2086 # the documented words, split as a shell would
	out=$(timeout 60 "$M" ${line#mtpcheck }) rc=$?
	[ "$rc" = 0 ] || { echo "$out" | tail -n 5; echo "FAIL: '$line' exited $rc, not 0"; exit 1; }
	grep -q ' 0 finding(s)' <<<"$out" || { echo "FAIL: '$line': $out"; exit 1; }
done <<<"$lines"
# the newcomer's trap: the same lists under the default engine draw the
# spec-vs-vLLM 0.33 expert names as findings, and one line says which
# --engine the lists need
WL=fixtures/weights/deepseek_v4_flash
out=$(timeout 60 "$M" audit-weights --family deepseek_v4 --layer 43 --keys $WL.keys.txt --params $WL.params.txt) rc=$?
[ "$rc" = 1 ] || { echo "FAIL: the bundled V4 lists under the default engine exited $rc, not 1"; exit 1; }
grep -q '^hint: .*--engine vllm@0.33 expects experts.routed_experts.*the bundled lists: spec' <<<"$out" ||
	{ echo "$out" | tail -n 3; echo "FAIL: no hint that the bundled lists need --engine spec"; exit 1; }
echo "the bundled lists audit clean under the documented commands ($(wc -l <<<"$lines") lines); the default engine hints at --engine spec"
