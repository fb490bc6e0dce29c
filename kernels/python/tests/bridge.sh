#!/bin/sh
# The python backend's failures, each named (CTest python.bridge): a wrong
# adapter op is diagnosed, an adapter that raises gets a verdict carrying the
# exception's line, a missing op is UNIMPLEMENTED, a broken or missing adapter
# is exit 2 with one line, fork (--isolate) and bench work.
# Needs $MTPCHECK; runs from the repository root. Exit 125: no NumPy here.
set -u
cd "$(dirname "$0")/../../.."
M=${MTPCHECK:?set MTPCHECK to the mtpcheck binary}
T=kernels/python/tests
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
fail() { echo "FAIL: $*"; sed -n 1,20p "$out" "$err"; fails=$((fails + 1)); }
run() { "$M" "$@" >"$out" 2>"$err"; rc=$?; }

run run --backend python:mtpcheck.adapters.numpy --filter rmsnorm.bf16.fused.T1.H64
if [ $rc = 125 ]; then echo "SKIPPED: $(head -1 "$out")"; exit 125; fi
[ $rc = 0 ] || fail "numpy adapter: exit $rc"
# a shipped adapter's short name wins over the module it is named after
run run --backend python:numpy --filter rmsnorm.bf16.fused.T1.H64
[ $rc = 0 ] && grep -q "PASSED" "$out" || fail "python:numpy (short name): exit $rc"
${PYTHON:-/usr/bin/python3} $T/test_rounding.py >"$out" 2>&1 || fail "NumPy adapter's rounding"

run run --backend python:$T/recycle_prenorm.py --filter 'mtp_step.deepseek_v3.bf16.*'
[ $rc = 1 ] || fail "recycle_prenorm: exit $rc, want 1"
grep -q "diagnosis: PRE_NORM_RECYCLE" "$out" || fail "recycle_prenorm: not named PRE_NORM_RECYCLE"
# the same bug around a captured (the engine's) block, SPEC.md §12.3
run run --backend python:$T/recycle_prenorm.py --fixtures fixtures/captured.h5 --filter step.v3.ok
[ $rc = 1 ] || fail "recycle_prenorm, captured block: exit $rc, want 1"
grep -q "diagnosis: PRE_NORM_RECYCLE" "$out" || fail "recycle_prenorm, captured block: not named PRE_NORM_RECYCLE"

run run --backend python:$T/raising.py --filter 'rmsnorm.bf16.fused.T1.H64,lm_head.bf16.T1.H64.V97'
[ $rc = 1 ] || fail "raising: exit $rc, want 1"
grep -q "FAILED .*ZeroDivisionError: deliberate failure in rmsnorm (raising.py:" "$out" ||
	fail "raising: no FAILED verdict with the exception's line"
grep -q "UNIMPLEMENTED .*lm_head" "$out" || fail "raising: lm_head not UNIMPLEMENTED"

for bad in "$T/syntax_error.py:SyntaxError" "no.such.adapter:no adapter module" \
	"torch_compile:shipped: numpy, torch" "mtpcheck.adapters.numpy:turbo:has no mode" \
	"/nonexistent/x.py:does not exist" "python:needs an adapter"; do
	spec=${bad%:*} want=${bad##*:}
	[ "$spec" = python ] && name=python || name=python:$spec
	run run --backend "$name" --filter rmsnorm.bf16.fused.T1.H64
	[ $rc = 2 ] || fail "$name: exit $rc, want 2"
	[ "$(wc -l <"$err")" = 1 ] || fail "$name: $(wc -l <"$err") lines on stderr, want 1"
	grep -q "$want" "$err" || fail "$name: stderr does not say '$want'"
done

run run --backend python:$T/forking.py --isolate --timeout 60 --filter 'hc_pre.*.T3.*,mtp_step.deepseek_v4.bf16.*'
[ $rc = 0 ] || fail "isolate (forks by Python, then by the harness): exit $rc"

run bench --backend python:mtpcheck.adapters.numpy --op rmsnorm,hc_head --T 1,8 --H 512
[ $rc = 0 ] && grep -q "hc_head .*python:mtpcheck.adapters.numpy .* ok" "$out" || fail "bench: exit $rc"

json=$(mktemp)
run bench --backend python:$T/fake_device.py --graph --op rmsnorm --T 1 --H 256 --json "$json"
[ $rc = 0 ] && grep -q '"graph": *true' "$json" && grep -q '"device_timer": *true' "$json" &&
	grep -q "rmsnorm .* ok" "$out" || fail "bench --graph with the adapter's timers and replay: exit $rc"
rm -f "$json"

# a missing framework names the module, the embedded interpreter (path and
# version) and how to pick another; MTP_PYTHON takes a venv of the embedded
# interpreter only, anything else is exit 2 with one line that says why
run run --backend python:$T/needs_missing.py --filter rmsnorm.bf16.fused.T1.H64
[ $rc = 125 ] && grep -q "^backend python:.*SKIPPED (.*No module named 'mtpcheck_no_such_framework'.*; the embedded Python is /[^ ]* (3\.[0-9]*\.[0-9]*), fixed when mtpcheck was built: cmake -DPython3_EXECUTABLE=" "$out" ||
	fail "missing framework: exit $rc, the reason does not name the interpreter and -DPython3_EXECUTABLE"
MTP_PYTHON=/bin/sh run run --backend python:numpy --filter rmsnorm.bf16.fused.T1.H64
[ $rc = 2 ] && [ "$(wc -l <"$err")" = 1 ] && grep -q "MTP_PYTHON=/bin/sh is not a virtual environment of the embedded Python" "$err" ||
	fail "MTP_PYTHON=/bin/sh: exit $rc, want 2 and one line saying it is no venv of the embedded Python"
v=$(mktemp -d)
if ${PYTHON:-/usr/bin/python3} -m venv --without-pip --system-site-packages "$v/venv" 2>/dev/null; then
	MTP_PYTHON=$v/venv/bin/python run run --backend python:numpy --filter rmsnorm.bf16.fused.T1.H64
	[ $rc = 0 ] || fail "MTP_PYTHON=a venv of the embedded Python: exit $rc"
else
	echo "note: no venv module for ${PYTHON:-/usr/bin/python3}: MTP_PYTHON with a venv not checked"
fi
unset MTP_PYTHON
rm -rf "$v"

# guard zones around every output, as the harness gives backends whose
# buffers are addresses: a write past or before an output is CRASHED
for where in past before; do
	[ $where = past ] && spec=$T/overflow.py || spec=$T/overflow.py:before
	run run --backend python:$spec --filter rmsnorm.bf16.fused.T1.H64
	[ $rc = 1 ] && grep -q "CRASHED .*memory corruption: wrote 8 bytes $where output y (guard zone)" "$out" ||
		fail "8 bytes written $where an output: exit $rc, no CRASHED guard-zone verdict"
done
run bench --backend python:$T/overflow.py --op rmsnorm --T 1 --H 64 --reps 3 --min-time 0.001
[ $rc = 1 ] && grep -q "rmsnorm .*FAILED: wrote 8 bytes past output y (guard zone)" "$out" ||
	fail "bench, 8 bytes written past an output: exit $rc, no FAILED line naming the guard zone"

# an adapter that ends the process (os._exit(0)) in bench: that problem is
# CRASHED, the others run, the JSON is whole and no FILE.tmpPID is left
d=$(mktemp -d)
run bench --backend python:numpy --op rmsnorm,hc_head --T 1 --H 64 --reps 3 --min-time 0.001 \
	--no-unfused --json "$d/base.json"
[ $rc = 0 ] || fail "bench for a baseline: exit $rc"
run bench --backend python:$T/exiting.py,ref --op rmsnorm,hc_head --T 1 --H 64 --reps 3 \
	--min-time 0.001 --no-unfused --baseline "$d/base.json" --gate --json "$d/new.json"
[ $rc = 1 ] || fail "bench, an adapter that calls os._exit(0): exit $rc, want 1"
grep -q "^rmsnorm .*python:$T/exiting.py .*CRASHED: the backend ended the process (exit status 0)" "$out" ||
	fail "bench, os._exit(0): no CRASHED line for rmsnorm"
${PYTHON:-/usr/bin/python3} - "$d/new.json" <<'PYEOF' || fail "bench, os._exit(0): the JSON is not whole"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["op"], r["backend"].split("/")[-1]) for r in d["rows"]}
assert ("hc_head", "exiting.py") in rows and ("rmsnorm", "ref") in rows, rows
assert ("rmsnorm", "exiting.py") not in rows, rows
(c,) = d["crashed"]
assert c["op"] == "rmsnorm" and c["backend"].endswith("exiting.py"), c
PYEOF
[ -z "$(ls "$d" | grep tmp)" ] || fail "bench, os._exit(0): left $(ls "$d" | grep tmp)"
rm -rf "$d"

# the bench gate against its own baseline while a load comes and goes
# (a synthetic device timer, noisy_timer.py: the first of 3 repeats 20 %
# slower) is SAME, exit 0; 20 % slower in every repeat is SLOWER, exit 1
d=$(mktemp -d)
B="bench --backend python:$T/noisy_timer.py --op rmsnorm --T 1 --H 64 --reps 10 --min-time 0.001 --no-unfused"
run $B --json "$d/base.json"
[ $rc = 0 ] || fail "noisy timer, baseline: exit $rc"
NOISY_SLOW=12:22 run $B --baseline "$d/base.json" --gate
[ $rc = 0 ] && grep -q "rmsnorm .* SAME, p .*, floor [0-9]* % (3 repeats)" "$out" ||
	fail "gate, a load in one repeat of 3: exit $rc, not SAME"
NOISY_SLOW=12:1000 run $B --baseline "$d/base.json" --gate
[ $rc = 1 ] && grep -q "rmsnorm .* SLOWER" "$out" || fail "gate, 20 % slower in every repeat: exit $rc, not SLOWER"
unset NOISY_SLOW
rm -rf "$d"

[ $fails = 0 ] && echo "python bridge: all checks passed"
[ $fails = 0 ]
