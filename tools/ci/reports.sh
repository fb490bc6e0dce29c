#!/usr/bin/env bash
# The reports people read (docs/RESULTS.md): builds a passing run, a failing
# run (a mutant), a three-night merged trend, a bench page and two bench
# nights' history (beside results, and alone), a selftest matrix and two
# weight audits (clean, and with findings), then checks
#  - every JSON against docs/results.schema.json (jsonschema), and that the
#    check rejects a file without its metadata;
#  - every JUnit file with junitparser, failures typed by their diagnosis;
#  - that every backend that ran has its device line (JSON meta, JUnit
#    property device.NAME, the HTML header);
#  - that `report` (results and bench files) and `bench --baseline` refuse a
#    newer schema major (exit 2);
#  - every HTML page in headless Chromium: no script error, key ids present,
#    the script ran; and that a page with a script error IS caught.
# `tools/ci/reports.sh --screenshots` also renews docs/screenshots/.
# Needs build/mtpcheck. Installs into /opt/mtpcheck-venvs/reports.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
M=${MTPCHECK_BIN:-$ROOT/build/mtpcheck}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL reports: $*"; exit 1; }
[ -x "$M" ] || fail "no $M (build first)"

V=/opt/mtpcheck-venvs/reports
if ! "$V/bin/python" -c 'import jsonschema, junitparser' 2>/dev/null; then
	rm -rf "$V"
	/usr/bin/python3 -m venv "$V" && "$V/bin/python" -m pip install -q jsonschema junitparser ||
		{ echo "SKIPPED reports checks: pip could not install jsonschema junitparser"; exit 0; }
fi
CHROME=$(command -v chromium || command -v chromium-browser || true)

echo "== the pages"
cd "$W"
OPS=rmsnorm,embed,mtp_block,draft_chain
"$M" run -q --op $OPS --run-id night1 --commit demo-1 --json pass.json --junit pass.xml --html pass.html >/dev/null
rc=0; "$M" run -q --op $OPS --backend mutant:MISSING_POS0_MASK:ref,mutant:DOUBLE_FINAL_NORM:ref \
	--json fail.json --junit fail.xml --html fail.html >/dev/null || rc=$?
[ $rc = 1 ] || fail "the mutant run exited $rc, not 1"
# three nights of one backend@host: a clean night, then two regressions
# (mutant results relabelled as the backend they wrap)
for n in 2 3; do
	mut=$([ $n = 2 ] && echo MISSING_POS0_MASK || echo DOUBLE_FINAL_NORM)
	"$M" run -q --op $OPS --backend mutant:$mut:ref --run-id night$n --json m$n.json >/dev/null || true
	sed -E 's/"mutant:[A-Z0-9_]+:ref"/"ref"/g' m$n.json >night$n.json
done
rc=0; "$M" report pass.json night2.json night3.json --html trend.html --json trend.json --junit trend.xml >/dev/null || rc=$?
[ $rc = 1 ] || fail "the trend report exited $rc, not 1"
"$M" bench --backend ref$("$M" list backends | grep -q '^cpu ' && echo ,cpu) --op rmsnorm,embed --T 1,16,64 \
	--H 256 --reps 5 --min-time 0.01 --json bench.json --html bench.html --csv bench.csv --md bench.md >/dev/null
rows=$(/usr/bin/python3 -c 'import json;print(len(json.load(open("bench.json"))["rows"]))')
[ "$(wc -l <bench.csv)" = $((rows + 1)) ] && head -1 bench.csv | grep -q '^op,shape,backend,median_us,iqr_pct,noisy' ||
	fail "bench.csv: not $rows rows under the header"
[ "$(wc -l <bench.md)" = $((rows + 2)) ] && sed -n 2p bench.md | grep -q '^|---' || fail "bench.md: not a $rows-row table"
# a second bench night, then its history beside the results, and alone
MTP_RUN_ID=bench-night2 "$M" bench --backend ref$("$M" list backends | grep -q '^cpu ' && echo ,cpu) --op rmsnorm,embed \
	--T 1,16,64 --H 256 --reps 5 --min-time 0.01 --json bench2.json >/dev/null
"$M" report pass.json bench.json bench2.json --html benchhist.html --json benchhist.json --junit benchhist.xml >/dev/null ||
	fail "the report of results and bench files exited $?"
"$M" report bench.json bench2.json --html benchonly.html >/dev/null || fail "the report of bench files exited $?"
[ "$(grep -c '<tr><td>[a-z_]*</td><td>T=' benchonly.html)" = "$rows" ] || fail "benchonly.html: not $rows history rows"
grep -q '<th>#2 ' benchonly.html || fail "benchonly.html: no second night"

# the selftest's detection matrix (ref and every mutant over it; rmsnorm
# only, so that it is quick and the mutants it leaves nothing to break are
# NOT APPLICABLE, not a failure) and the weight audit over the bundled lists
rc=0; "$M" selftest --backend ref --fixtures "$ROOT/fixtures/norms.h5" --filter 'rmsnorm.*' --run-id night1 \
	--commit demo-1 --json st.json >/dev/null || rc=$?
[ $rc = 0 ] || fail "selftest --json exited $rc, not 0"
WL=$ROOT/fixtures/weights/deepseek_v4_flash
"$M" audit-weights --family deepseek_v4 --layer 43 --keys $WL.keys.txt --params $WL.params.txt \
	--modules $WL.modules.txt --engine spec --run-id night1 --commit demo-1 --json aw.json >/dev/null ||
	fail "the clean weight audit exited $?"
rc=0; "$M" audit-weights --family deepseek_v4 --layer 43 --keys $WL.keys.txt --params $WL.params.txt \
	--modules $WL.modules_noprefix.txt --engine spec --json aw_bug.json >/dev/null || rc=$?
[ $rc = 1 ] || fail "the weight audit of an unprefixed e_proj exited $rc, not 1"

echo "== JSON schema (docs/results.schema.json) on every writer's output"
"$V/bin/python" - "$ROOT/docs/results.schema.json" pass.json fail.json trend.json bench.json benchhist.json \
	st.json aw.json aw_bug.json <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
for p in sys.argv[2:]:
    doc = json.load(open(p))
    errs = list(v.iter_errors(doc))
    if errs:
        sys.exit(f"FAIL {p}: {errs[0].json_path}: {errs[0].message}")
    bad = dict(doc); del bad["meta"]
    if not list(v.iter_errors(bad)):
        sys.exit(f"FAIL the schema accepts {p} without its meta")
    for b in doc["meta"]["backends"]:  # every backend's device line
        if not b["device"] or "no worker" in b["device"]:
            sys.exit(f"FAIL {p}: backend {b['name']} without its device line: {b['device']!r}")
    names = {b["name"] for b in doc["meta"]["backends"]}
    ran = {r["backend"] for r in doc.get("results", [])} | {r["backend"] for r in doc.get("rows", [])}
    if ran - names:
        sys.exit(f"FAIL {p}: backends {sorted(ran - names)} ran but meta.backends lacks them")
    if doc["format"] == "mtpcheck-selftest":
        if not doc["rows"] or doc["rows"][0]["backend"] != "ref" or doc["exit_code"] != 0:
            sys.exit(f"FAIL {p}: not the matrix of ref and its mutants that passed")
    if doc["format"] == "mtpcheck-weight-audit":
        if doc["summary"]["findings"] != len(doc["findings"]) or doc["exit_code"] != (1 if doc["findings"] else 0):
            sys.exit(f"FAIL {p}: summary.findings or exit_code disagree with the findings")
        if p == "aw_bug.json" and {f["code"] for f in doc["findings"]} != {"EH_PROJ_NO_PREFIX"}:
            sys.exit(f"FAIL {p}: the unprefixed e_proj is not named EH_PROJ_NO_PREFIX")
        if p == "aw.json" and (doc["findings"] or doc["meta"]["commit"] != "demo-1"):
            sys.exit(f"FAIL {p}: findings on the fixed loader, or the commit is not --commit's")
    shown = sorted(names) if len(names) <= 4 else f"{len(names)} backends"
    print(f"ok {p}: {doc['format']} schema {doc['schema_version']}, run {doc['meta']['run_id']}, devices of {shown}")
PY

echo "== JUnit read by junitparser"
"$V/bin/python" - pass.xml fail.xml trend.xml benchhist.xml <<'PY'
import sys
from junitparser import JUnitXml, Failure
for p in sys.argv[1:]:
    xml = JUnitXml.fromfile(p)
    n = fails = 0
    for suite in xml:
        assert suite.hostname and suite.timestamp, f"{p}: suite without hostname/timestamp"
        props = {q.name: q.value for q in suite.properties()}
        assert props.get("schema_version") and props.get("run_id"), f"{p}: properties missing"
        be = suite.name[len("mtpcheck."):]
        assert props.get("device." + be), f"{p}: no device.{be} property"
        for case in suite:
            n += 1
            for res in case.result:
                if isinstance(res, Failure):
                    fails += 1
                    assert res.type, f"{p}: failure without type"
    assert n > 0, f"{p}: no testcase"
    print(f"ok {p}: {n} testcases, {fails} failures")
    if p == "fail.xml":
        assert fails > 0, "fail.xml has no failure"
PY
grep -q '<failure type="MISSING_POS0_MASK"' fail.xml || fail "failure type is not the diagnosis"

echo "== a newer schema major is refused with one line, exit 2"
sed -E 's/"schema_version":"2\.[0-9]+"/"schema_version":"3.0"/' pass.json >newer.json
rc=0; "$M" report newer.json --json x.json 2>err.txt >/dev/null || rc=$?
[ $rc = 2 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "newer" err.txt || fail "report on a 3.0 file: exit $rc: $(cat err.txt)"
sed -E 's/"schema_version":"2\.[0-9]+"/"schema_version":"3.0"/' bench.json >newer_bench.json
rc=0; "$M" bench --backend ref --op rmsnorm --T 1 --H 256 --reps 3 --min-time 0.01 --baseline newer_bench.json >/dev/null 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q "newer" err.txt || fail "bench --baseline on a 3.0 file: exit $rc: $(cat err.txt)"
rc=0; "$M" report pass.json newer_bench.json --html x.html 2>err.txt >/dev/null || rc=$?
[ $rc = 2 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "newer_bench.json: schema_version 3.0 is newer" err.txt ||
	fail "report on a 3.0 bench file: exit $rc: $(cat err.txt)"

if [ -z "$CHROME" ]; then
	echo "SKIPPED the pages in Chromium: chromium is not installed (tools/ci/deps.sh)"
	exit 0
fi
echo "== the pages in headless Chromium"
chrome() { timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --enable-logging=stderr --v=0 "$@"; }
# page ids...: loads it, fails on a script error, a missing id or a script that did not run
page() {
	local f=$1; shift
	chrome --dump-dom "file://$W/$f" >"$f.dom" 2>"$f.log" || fail "$f: chromium exited $?"
	! grep -E "Uncaught|CONSOLE.*(Error|error)" "$f.log" || fail "$f: script error"
	for id in "$@"; do grep -q "id=\"$id\"" "$f.dom" || fail "$f: no element id=$id"; done
	grep -q 'class="s"' "$f.dom" || fail "$f: the table script did not run"
	echo "ok $f: $*"
}
printf '<!DOCTYPE html><html><body><table class="st"><tr><th>x</th></tr></table><script>nosuch();</script></body></html>' >broken.html
if chrome --dump-dom "file://$W/broken.html" >/dev/null 2>broken.log && ! grep -q Uncaught broken.log; then
	fail "a script error in a page is not seen (the check would pass anything)"
fi
page pass.html summary meta byop matrix failures nofail filt
page fail.html summary meta failures matrix filt
page trend.html summary meta trends trend sparks failures
page bench.html meta rows plots
page benchhist.html summary meta bench benchnights benchdev benchhist byop matrix
page benchonly.html summary meta bench benchhist
grep -q 'class="device">device of ref' pass.html.dom || fail "pass.html: no device line in the header"

if [ "${1:-}" = --screenshots ]; then
	S=$ROOT/docs/screenshots
	mkdir -p "$S"
	for f in pass fail trend bench benchhist; do
		chrome --screenshot="$S/$f-1400.png" --window-size=1400,1000 --hide-scrollbars "file://$W/$f.html" 2>/dev/null
		chrome --screenshot="$S/$f-420.png" --window-size=420,1000 --hide-scrollbars "file://$W/$f.html" 2>/dev/null
	done
	ls -la "$S"
fi
echo "reports: all checks passed"
