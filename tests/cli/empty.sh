#!/usr/bin/env bash
# Nothing compared is never PASSED (docs/ARCHITECTURE.md, "Verdicts and exit
# codes"). Usage: empty.sh MTPCHECK SOURCE_DIR suite BACKEND | dumps | adapter
#   suite BACKEND: cases/empty.case (every op at T = 0) on BACKEND: every
#     result SKIPPED "nothing compared: ...", 0 elements compared (or
#     UNIMPLEMENTED where the backend lacks the op), every op
#     of the table among them, no crash, exit 125 (nothing was tested); 125
#     from the script too where the backend is not available here. Then the
#     captured-block and FP8 goldens cut to T = 0: SKIPPED as nothing
#     compared, or UNIMPLEMENTED where the backend has no such kernels.
#   dumps: verify on dumps whose judged outputs hold nothing to compare
#     (tools/gen/empty_dumps.py), each the only case of its file: never
#     PASSED, never exit 0; an empty vocabulary is INVALID (exit 2).
#   adapter: a python adapter that needs its inputs listed in supports()
#     (kernels/python/tests/needs_inputs.py) sees the empty ones: SKIPPED
#     as nothing compared, not UNIMPLEMENTED; 125 without NumPy.
set -u
M=$1 SRC=$2 MODE=$3 BE=${4:-}
PY=/usr/bin/python3
W=$(mktemp -d /tmp/mtp-empty.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL [empty $MODE $BE]: $*"; tail -5 "$W/out" 2>/dev/null; exit 1; }

# expect CODE PATTERN CMD...: exit code and a line matching PATTERN
expect() {
	local code=$1 pat=$2; shift 2
	timeout 120 "$@" >"$W/out" 2>&1; local rc=$?
	[ "$rc" = "$code" ] || fail "'$*' exited $rc, not $code"
	grep -Eq -- "$pat" "$W/out" || fail "'$*': no line matching /$pat/"
	! grep -q "PASSED" "$W/out" || fail "'$*' says PASSED"
}

case $MODE in
suite)
	timeout 600 "$M" run --backend "$BE" --cases "$SRC/cases/empty.case" \
		--json "$W/r.json" >"$W/out" 2>&1
	rc=$?
	"$M" list ops | awk '{print $1}' >"$W/ops"
	$PY - "$W/r.json" "$rc" "$W/ops" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
rc, ops = int(sys.argv[2]), set(open(sys.argv[3]).read().split())
res = doc["results"]
why = [r["message"] for r in res if not r["message"].startswith("nothing compared: ")]
if res and len(why) == len(res) and all(r["verdict"] == "SKIPPED" for r in res):
    print("backend not available here:", why[0])
    sys.exit(125)
# an op the backend has no kernel for is UNIMPLEMENTED (the DSpark ops on
# the GPU backends and the adapters): it ran nothing, and passes nothing
bad = [(r["case"], r["verdict"], r["message"]) for r in res
       if r["verdict"] != "UNIMPLEMENTED" and (
           r["verdict"] != "SKIPPED" or not r["message"].startswith("nothing compared: ")
           or r["compared_elements"] != 0 or any(o["elements"] for o in r["outputs"]))]
for b in bad:
    print("not SKIPPED as nothing compared:", *b)
missing = ops - {r["op"] for r in res}
if missing:
    print("ops without an empty-batch case:", sorted(missing))
if rc != 125 or doc["exit_code"] != 125:
    print("exit code", rc, "not 125 (nothing tested)")
sys.exit(1 if bad or missing or rc != 125 else 0)
EOF
	prc=$?
	[ $prc = 125 ] && exit 125
	[ $prc = 0 ] || fail "see above"
	# the captured-block form and FP8 at T = 0 (fixtures cut by
	# empty_dumps.py): nothing compared, or not implemented by the backend
	$PY "$SRC/tools/gen/empty_dumps.py" t0_fixtures "$W/t0f.h5" || fail "t0_fixtures"
	timeout 600 "$M" run --backend "$BE" --fixtures "$W/t0f.h5" --json "$W/f.json" >"$W/out" 2>&1
	$PY - "$W/f.json" <<'EOF' || fail "see above"
import json, sys
res = json.load(open(sys.argv[1]))["results"]
bad = [(r["case"], r["verdict"], r["message"]) for r in res
       if r["verdict"] != "UNIMPLEMENTED" and not (
           r["verdict"] == "SKIPPED" and r["message"].startswith("nothing compared: "))]
for b in bad:
    print("T = 0 fixture not SKIPPED as nothing compared:", *b)
sys.exit(1 if bad or not res else 0)
EOF
	;;
dumps)
	for k in t0_norm t0_rows t0_chain tokens_unjudged v0_chain rows0_chain; do
		$PY "$SRC/tools/gen/empty_dumps.py" $k "$W/$k.h5" || fail "empty_dumps.py $k"
	done
	expect 125 "SKIPPED .*nothing compared: R = 0 \(an empty batch\)" "$M" verify "$W/t0_norm.h5"
	expect 125 "SKIPPED .*nothing compared: T = 0 \(an empty batch\)" "$M" verify "$W/t0_chain.h5"
	# rows written for no token: still judged, and wrong
	expect 1 "FAILED .*y: shape \[3, ?256\], expected \[0, ?256\]" "$M" verify "$W/t0_rows.h5"
	expect 125 "SKIPPED .*nothing compared: 'token': all 3 tokens differ inside" "$M" verify "$W/tokens_unjudged.h5"
	expect 2 "v0_chain.h5: /cases/v0.draft_chain: V = 0: only the batch dims T, R and C may be 0" \
		"$M" verify "$W/v0_chain.h5"
	expect 2 "rows0_chain.h5: /cases/chain.v3.L1.K3.sub_all.ok: observed/step.0/logits_rows: lists no row" \
		"$M" verify "$W/rows0_chain.h5"
	# the weight rule alone on a case without head or embedding weight
	expect 125 "SKIPPED .*nothing compared: weights only, and the case holds no head" \
		"$M" verify --weights-only "$W/t0_norm.h5"
	# a fixture whose golden is empty where its shape says elements: INVALID
	$PY - "$SRC/fixtures/norms.h5" "$W/golden0.h5" <<'EOF' || fail "golden0"
import sys, h5py
src, out = sys.argv[1:]
cid = "rmsnorm.bf16.eager.T3.H256"
with h5py.File(src, "r") as s, h5py.File(out, "w") as f:
    for k, v in s.attrs.items():
        f.attrs[k] = v
    s.copy(s["cases/" + cid], f.create_group("cases"), name=cid)
    y = f["cases/%s/expected/y" % cid]
    a, dt = y[()][:0], y.attrs["dtype"]
    del f["cases/%s/expected/y" % cid]
    f.create_dataset("cases/%s/expected/y" % cid, data=a).attrs["dtype"] = dt
EOF
	expect 2 "golden0.h5: /cases/rmsnorm.bf16.eager.T3.H256: expected 'y': shape \[0, ?256\], but the op produces \[3, ?256\]" \
		"$M" run --backend ref --fixtures "$W/golden0.h5"
	;;
adapter)
	timeout 300 "$M" run --backend "python:$SRC/kernels/python/tests/needs_inputs.py" \
		--cases "$SRC/cases/empty.case" --op rmsnorm,lm_head,hc_post >"$W/out" 2>&1
	rc=$?
	grep -q "UNIMPLEMENTED" "$W/out" && fail "an empty input was not listed to supports()"
	[ $rc = 125 ] && ! grep -q "nothing compared" "$W/out" && exit 125 # no NumPy here
	[ $rc = 125 ] && grep -q "4 results: 4 SKIPPED" "$W/out" || fail "exit $rc"
	! grep -q "PASSED" "$W/out" || fail "says PASSED"
	;;
*) fail "unknown mode $MODE" ;;
esac
