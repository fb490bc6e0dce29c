#!/usr/bin/env bash
# The determinism modes through the command line (docs/DIAGNOSES.md
# "Determinism"), on the quick suite: one CTest test per class.
# Usage: determinism.sh CLASS MTPCHECK SOURCE_DIR [BACKEND [DIAGNOSIS]]
#  clean B      --invariance --repeat 3 --bitwise all pass on B, each case
#               says what was checked, the metadata records the modes
#  bitwise B    --repeat 3 --bitwise all pass on B
#  variant B    --invariance on a backend that may not be batch invariant:
#               what does not pass is FAILED and named BATCH_VARIANT, never
#               anything else, and no case passes without its note
#  mutant B D   the mutant of D over B passes a plain run (within every
#               tolerance) and fails under its mode, every failure named D
#               (it changes bf16/f16 outputs: float32-only cases pass)
#  usage        combinations that mean nothing: one line, exit 2
set -u
T=$1 M=$2 SRC=$3 B=${4:-ref} D=${5:-}
PY=/usr/bin/python3
CASES="$SRC/cases/quick.case"
W=$(mktemp -d /tmp/mtp-det.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL [$T $B $D]: $*"; exit 1; }
run() { # run CODE ARGS...: the exit code must be CODE (a list: "0|1")
	local want=$1; shift
	"$M" run --cases "$CASES" -q "$@" >"$W/out" 2>&1; local rc=$?
	[ "$rc" = 125 ] && { echo "skip [$T $B]: nothing could be tested"; exit 125; }
	echo "$rc" | grep -Eqx "$want" || { tail -5 "$W/out"; fail "'$*' exited $rc, not $want"; }
}
# check JSON PYTHON-CONDITION MESSAGE: over r (each result) and meta
check() {
	$PY - "$1" "$2" <<'PYEOF' || fail "$3"
import json, sys
doc = json.load(open(sys.argv[1]))
meta, results = doc["meta"], doc["results"]
bad = [r for r in results if not eval(sys.argv[2], {"r": r, "meta": meta})]
for r in bad[:3]:
    print(r["case"], r["verdict"], r["message"][:200], r.get("note", ""))
sys.exit(1 if bad or not results else 0)
PYEOF
}

case $T in
clean)
	run 0 --backend "$B" --invariance --repeat 3 --bitwise --json "$W/r.json"
	check "$W/r.json" 'r["verdict"] == "PASSED" and "invariance:" in r["note"] and "bitwise: 3 runs" in r["note"]' \
		"a case passed without saying what was checked"
	check "$W/r.json" 'meta["determinism"] == {"repeat": 3, "bitwise": True, "invariance": True, "invariance_ulps": 0}' \
		"meta.determinism does not record the modes" ;;
bitwise)
	run 0 --backend "$B" --repeat 3 --bitwise --json "$W/r.json"
	# an op the backend lacks (the DSpark ops on the adapters) ran nothing
	check "$W/r.json" 'r["verdict"] == "UNIMPLEMENTED" or "bitwise: 3 runs" in r["note"]' "a rerun case without its note" ;;
variant)
	run "0|1" --backend "$B" --invariance --json "$W/r.json"
	check "$W/r.json" 'r["verdict"] == "UNIMPLEMENTED" or (r["verdict"] == "PASSED" and "invariance:" in r["note"]) or (r["verdict"] == "FAILED" and r["diagnosis"]["code"] == "BATCH_VARIANT" and "--invariance" in r["repro"])' \
		"--invariance gave a verdict other than PASSED with its note or FAILED as BATCH_VARIANT" ;;
mutant)
	flags="--invariance"
	[ "$D" = NONDETERMINISTIC ] && flags="--repeat 2 --bitwise"
	run 0 --backend "mutant:$D:$B"
	# shellcheck disable=SC2086
	run 1 --backend "mutant:$D:$B" $flags --json "$W/r.json"
	# exit 1: it failed cases; each as D (float32-only cases it cannot break)
	check "$W/r.json" "r['verdict'] == 'PASSED' or (r['verdict'] == 'FAILED' and r['diagnosis']['code'] == '$D' and '$flags' in r['repro'])" \
		"mutant:$D:$B $flags: a case failed, but not named $D" ;;
usage)
	for args in "--repeat 3" "--invariance-ulps 2" "--repeat 0 --bitwise" "--repeat x --bitwise" \
		"--invariance --invariance-ulps -1" "--repeat"; do
		# shellcheck disable=SC2086
		"$M" run $args >"$W/out" 2>&1; rc=$?
		[ $rc = 2 ] && [ "$(wc -l <"$W/out")" = 1 ] || { cat "$W/out"; fail "run $args: exit $rc"; }
	done
	"$M" verify "$SRC/fixtures/dumps/bugs.h5" --invariance >"$W/out" 2>&1
	[ $? = 2 ] && grep -q "option of mtpcheck run" "$W/out" || fail "verify --invariance is not a usage error"
	"$M" selftest --bitwise >"$W/out" 2>&1
	[ $? = 2 ] || fail "selftest --bitwise is not a usage error" ;;
*) fail "unknown class" ;;
esac
echo "ok [$T $B $D]"
