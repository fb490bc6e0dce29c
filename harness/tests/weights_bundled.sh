#!/usr/bin/env bash
# The bundled weight lists (fixtures/weights) audit clean under the command
# docs/WEIGHTS.md gives for them ("The bundled lists"): every documented
# `mtpcheck audit-weights ... fixtures/weights/...` line is run from the
# source tree and must exit 0 with no finding; both families must be there.
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
echo "the bundled lists audit clean under the documented commands ($(wc -l <<<"$lines") lines)"
