#!/usr/bin/env bash
# `mtpcheck report` against hostile and repeated inputs (issue 28; docs/RESULTS.md):
# one CTest test per class, each on files written at run time from a real run.
#   malformed  every bad results or bench file is one line naming the file and
#              the field, exit 2 (no silent INVALIDs, no crash)
#   weights    a verify --weights-only file is read as what it is (PASSED, exit 0)
#   scale      100 000 bench rows, and 100 000 results to the page, in well
#              under a minute (were 107 s and hours: quadratic)
#   again      re-running over its own output, or over a merged report beside its
#              inputs, counts every result once; a merged report read again gives
#              the same columns
#   markdown   the benchmarks page (--markdown) says what the bench files' records
#              say, row by row, whatever the order of the files, and nothing else
# Usage: report.sh TEST MTPCHECK SOURCE_DIR
set -u
T=$1 M=$2 SRC=$3
PY=/usr/bin/python3
W=$(mktemp -d /tmp/mtp-report.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
fail() { echo "FAIL [$T]: $*"; exit 1; }
# expect CODE PATTERN CMD...: exit code and a line matching PATTERN (stdout+err)
expect() {
	local code=$1 pat=$2; shift 2
	timeout 120 "$@" >"$W/out" 2>&1; local rc=$?
	[ "$rc" = "$code" ] || { tail -5 "$W/out"; fail "'$*' exited $rc, not $code"; }
	[ -z "$pat" ] || grep -Eq -- "$pat" "$W/out" || { tail -5 "$W/out"; fail "'$*': no line matching /$pat/"; }
}
one_line() { [ "$(wc -l <"$W/out")" = 1 ] || { cat "$W/out"; fail "$1: not one line"; }; }
run_norms() { # run_norms OUT.json [options]: a small real results file
	local out=$1; shift
	"$M" run --fixtures "$SRC/fixtures/norms.h5" --filter 'rmsnorm.*' --json "$out" "$@" >/dev/null ||
		fail "run $out"
}

case $T in
malformed)
	run_norms good.json --run-id n1
	MTP_RUN_ID=b1 "$M" bench --backend ref --op rmsnorm --T 1 --H 64 --reps 3 --min-time 0.001 \
		--no-unfused --json bench.json >/dev/null || fail "bench"
	# NAME|PATTERN of the one line; each file written from good.json or bench.json
	$PY - <<'PYEOF' || fail "cannot write the bad files"
import json
d = json.load(open("good.json")); b = json.load(open("bench.json"))
r0, o0 = d["results"][0], d["results"][0]["outputs"][0]
def res(name, **kw):
    json.dump(dict(d, results=[dict(r0, **kw)]), open(name + ".json", "w"))
def out(name, **kw):
    res(name, outputs=[dict(o0, **kw)])
text = json.dumps(d)
open("trunc.json", "w").write(text[: len(text) // 2])
open("garbage.json", "wb").write(bytes(range(256)) * 8)
open("nul.json", "wb").write(text.encode() + b"\0{}")
open("trailing.json", "w").write(text + " ]")
open("empty.json", "w").write("")
json.dump([d], open("array.json", "w"))
open("number.json", "w").write("42")
r = dict(r0); del r["verdict"]; json.dump(dict(d, results=[r]), open("noverdict.json", "w"))
r = dict(r0); del r["case"]; json.dump(dict(d, results=[r]), open("nocase.json", "w"))
res("verdictnum", verdict=3)
res("verdictword", verdict="GREAT")
res("outputsnum", outputs=5)
json.dump(dict(d, results=[5]), open("resultnum.json", "w"))
json.dump(dict(d, results={}), open("resultsobj.json", "w"))
out("elemhuge", elements=1e300)
out("elemneg", elements=-1)
out("elemfrac", elements=2.5)
out("passedstr", passed="yes")
out("threshnum", threshold=5)
out("worstidx", worst_index=[0, "x"])
out("hist", ulp_histogram=[1, 2])
res("seconds", seconds="soon")
res("diag", diagnosis=[])
json.dump(dict(d, machine=[]), open("machine.json", "w"))
json.dump(dict(d, meta=dict(d["meta"], backends={})), open("backends.json", "w"))
json.dump(dict(d, merge={"columns": [{"column": "ref@vm"}]}, command="report"), open("mergecol.json", "w"))
json.dump(dict(d, schema_version="x\n.0"), open("svnl.json", "w"))
cols = [{"column": c, "backend": "cpu", "host": "h", "run_id": "r", "weights_only": c == "b"} for c in "ab"]
json.dump(dict(d, merge={"columns": cols}, command="report",
               results=[dict(r0, backend="a"), dict(r0, backend="b", verdict="PASSED", outputs=[])]),
          open("wocols.json", "w"))
rows = [dict(b["rows"][0])]; del rows[0]["shape"]
json.dump(dict(b, rows=rows), open("noshape.json", "w"))
json.dump(dict(b, rows=[dict(b["rows"][0], median_s=-1)]), open("negmedian.json", "w"))
json.dump(dict(b, rows=[dict(b["rows"][0], backend=None)]), open("nullbackend.json", "w"))
json.dump(dict(b, record=[]), open("recordarr.json", "w"))
json.dump(dict(b, record={"notes": ["a", 5]}), open("recnotes.json", "w"))
json.dump(dict(b, record={"title": 5}), open("rectitle.json", "w"))
json.dump(dict(b, record={"reason": "x" * 65537}), open("reclong.json", "w"))
json.dump(dict(b, rows=[dict(b["rows"][0], prediction={})]), open("rowpred.json", "w"))
json.dump({"format": "mtpcheck-bench-collection", "runs": {}}, open("collruns.json", "w"))
json.dump({"format": "mtpcheck-bench-collection", "runs": [b, dict(b, format="x")]}, open("collrun.json", "w"))
json.dump({"format": "mtpcheck-bench-collection", "runs": [dict(b, rows=[dict(b["rows"][0], median_s=None)])]},
          open("collrow.json", "w"))
PYEOF
	mkdir folder; mkfifo fifo
	while IFS='|' read -r f pat; do
		expect 2 "^mtpcheck report: $f: $pat" "$M" report "$f" --json x.json --html x.html
		one_line "$f"
		[ -e x.json ] || [ -e x.html ] && fail "$f: a report was written from a bad input"
	done <<'EOF'
trunc.json|not valid JSON \(error at byte [0-9]+ of [0-9]+: cut short or damaged\)$
garbage.json|not valid JSON \(a NUL byte at byte 0\)$
nul.json|not valid JSON \(a NUL byte at byte [0-9]+\)$
trailing.json|not valid JSON \(error at byte [0-9]+ of [0-9]+: cut short or damaged\)$
empty.json|not valid JSON \(an empty file\)$
array.json|not a JSON object
number.json|not a JSON object
noverdict.json|results\[0\]\.verdict: missing$
nocase.json|results\[0\]\.case: missing$
verdictnum.json|results\[0\]\.verdict: not a string$
verdictword.json|results\[0\]\.verdict: not a verdict \(PASSED,
outputsnum.json|results\[0\]\.outputs: not an array$
resultnum.json|results\[0\]: not an object$
resultsobj.json|results: not an array$
elemhuge.json|results\[0\]\.outputs\[0\]\.elements: not an integer from 0 to 2\^53$
elemneg.json|results\[0\]\.outputs\[0\]\.elements: not an integer
elemfrac.json|results\[0\]\.outputs\[0\]\.elements: not an integer
passedstr.json|results\[0\]\.outputs\[0\]\.passed: not true or false$
threshnum.json|results\[0\]\.outputs\[0\]\.threshold: not an object$
worstidx.json|results\[0\]\.outputs\[0\]\.worst_index\[1\]: not an integer
hist.json|results\[0\]\.outputs\[0\]\.ulp_histogram: not 8 integers$
seconds.json|results\[0\]\.seconds: not a number$
diag.json|results\[0\]\.diagnosis: not an object$
machine.json|machine: not an object$
backends.json|meta\.backends: not an array$
mergecol.json|merge\.columns\[0\]\.backend: missing$
svnl.json|schema_version 'x\\x0a\.0' is not M\.N$
wocols.json|results\[1\]\.backend: a column whose results disagree on weights_only$
noshape.json|rows\[0\]\.shape: missing$
negmedian.json|rows\[0\]\.median_s: not a finite number >= 0$
nullbackend.json|rows\[0\]\.backend: not a string$
recordarr.json|record: not an object$
recnotes.json|record\.notes: holds a non-string$
rectitle.json|record\.title: not a string or array of strings$
reclong.json|record\.reason: longer than 65536 bytes$
rowpred.json|rows\[0\]\.prediction: not a string or array of strings$
collruns.json|runs: missing or not an array$
collrun.json|runs\[1\]: format: not an mtpcheck-bench document$
collrow.json|runs\[0\]: rows\[0\]\.median_s: not a number$
folder|cannot read: not a regular file \(a folder\)$
fifo|cannot read: not a regular file \(a FIFO\)$
EOF
	# and a good file still makes a report
	expect 0 "12 results" "$M" report good.json --json x.json ;;
weights) # verify --weights-only: the sanity rule passed, no output compared
	"$M" verify --weights-only "$SRC/fixtures/dumps/bugs.h5" --json wo.json >/dev/null || fail "verify --weights-only"
	n=$($PY -c 'import json; print(len(json.load(open("wo.json"))["results"]))')
	[ "$n" -gt 0 ] || fail "no results in the --weights-only file"
	expect 0 "^mtpcheck report: $n results from 1 file\(s\), exit code 0$" "$M" report wo.json --json m.json --html m.html
	$PY - "$n" <<'PYEOF' || fail "the --weights-only results are not read as passed weight checks"
import json, sys
d = json.load(open("m.json"))
assert d["summary"] == {"PASSED": int(sys.argv[1])}, d["summary"]
assert all(r["message"].startswith("weights only:") for r in d["results"])
assert [c["weights_only"] for c in d["merge"]["columns"]] == [True], d["merge"]
PYEOF
	# read again, the merged file is the same weights-only check
	expect 0 "^mtpcheck report: $n results from 1 file\(s\), exit code 0$" "$M" report m.json --json m2.json
	# a full run's PASSED without elements stays SKIPPED: nothing compared
	$PY - <<'PYEOF' || fail "cannot write the run without outputs"
import json
d = json.load(open("wo.json"))
d["command"] = "run"; d["meta"]["command_line"] = "mtpcheck run --fixtures x.h5"
json.dump(d, open("run.json", "w"))
PYEOF
	expect 125 "exit code 125" "$M" report run.json --json r.json
	grep -q '"SKIPPED":'"$n" r.json || fail "a run's PASSED without outputs was not SKIPPED" ;;
scale) # 100 000 bench rows over two nights (each pair of rows compared took 107 s)
	MTP_RUN_ID=b1 "$M" bench --backend ref --op rmsnorm --T 1 --H 64 --reps 3 --min-time 0.001 \
		--no-unfused --json bench.json >/dev/null || fail "bench"
	$PY - <<'PYEOF' || fail "cannot write the large bench files"
import json
b = json.load(open("bench.json")); row = b["rows"][0]
for k in range(2):
    rows = [dict(row, shape="T=%d H=64" % i, samples_s=[1e-6 * (1 + i % 7)]) for i in range(50000)]
    json.dump(dict(b, rows=rows, meta=dict(b["meta"], run_id="night%d" % k)), open("n%d.json" % k, "w"))
PYEOF
	start=$(date +%s)
	timeout 60 "$M" report n0.json n1.json n0.json --html h.html >out 2>&1; rc=$?
	[ $rc = 124 ] && fail "100 000 bench rows took over 60 s"
	[ $rc = 0 ] || { cat out; fail "exit $rc"; }
	grep -q "100000 bench rows of 2 night" out || fail "not every row: $(cat out)"
	[ "$(grep -c '<tr><td>rmsnorm</td><td>T=' h.html)" = 50000 ] || fail "not one table row per op, shape and backend"
	echo "100000 bench rows: $(($(date +%s) - start)) s"
	# 100 000 results over two nights, to the page (its matrix and trend looked
	# each cell up among all results: hours)
	"$M" run --fixtures "$SRC/fixtures/norms.h5" --filter 'rmsnorm.*' --json r.json >/dev/null || fail "run"
	$PY - <<'PYEOF' || fail "cannot write the large results files"
import json
d = json.load(open("r.json")); r = d["results"]
for k in range(2):
    res = [dict(r[i % 2], case="c%d" % i, verdict=["PASSED", "FAILED"][(i + k) % 1000 == 0]) for i in range(50000)]
    json.dump(dict(d, results=res, run_id="night%d" % k), open("r%d.json" % k, "w"))
PYEOF
	start=$(date +%s)
	timeout 60 "$M" report r0.json r1.json --html r.html >out 2>&1; rc=$?
	[ $rc = 124 ] && fail "100 000 results to the page took over 60 s"
	[ $rc = 1 ] || { cat out; fail "exit $rc, not 1"; }
	grep -q "^mtpcheck report: 100000 results from 2 file" out || fail "not every result: $(cat out)"
	[ "$(grep -c '^<tr><td><code>' r.html)" -ge 50000 ] || fail "not a matrix row per case"
	grep -q 'id="trend"' r.html || fail "no trend of the two nights"
	echo "100000 results to the page: $(($(date +%s) - start)) s" ;;
again) # a report's output among its inputs, or a merged report beside its inputs
	mkdir res
	for i in 0 1 2; do run_norms res/s$i.json --run-id nightA --shard $i/3; done
	run_norms res/other.json --run-id nightB
	n=$($PY -c 'import json,glob; print(sum(len(json.load(open(f))["results"]) for f in glob.glob("res/*.json")))')
	for k in 1 2 3; do
		expect 0 "^mtpcheck report: $n results from 4 file" "$M" report res/*.json --json res/merged.json
		[ $k = 1 ] || grep -q "note: res/merged.json is this report's own --json output: skipped" "$W/out" ||
			fail "run $k: no note that the output was skipped"
	done
	# the merged report beside its inputs, into another file: each result once
	expect 0 "^mtpcheck report: $n results from 5 file\(s\) \($n result\(s\) .*once\)" \
		"$M" report res/*.json --json again.json --junit again.xml
	# read alone, the merged report gives back the same columns and verdicts
	expect 0 "^mtpcheck report: $n results from 1 file" "$M" report res/merged.json --json alone.json
	$PY - <<'PYEOF' || fail "a merged report read again is not its inputs"
import json
def key(f):
    d = json.load(open(f))
    return sorted((r["backend"], r["file"], r["case"], r["verdict"]) for r in d["results"]), d
a, da = key("res/merged.json"); b, db = key("again.json"); c, dc = key("alone.json")
assert a == b == c, (len(a), len(b), len(c))
assert len({x[0] for x in a}) == 2, {x[0] for x in a}  # nightA's shards in one column, nightB dated
assert sorted(da["merge"]["runs"]) == ["nightA", "nightB"], da["merge"]
assert da["merge"]["inputs"] == 4 and db["merge"]["repeats_dropped"] == len(a), (da["merge"], db["merge"])
PYEOF
	# the merge object against its golden file: inputs of fixed hosts, runs and
	# dates (two nights of one host, another host, a weights-only verify)
	"$M" verify --weights-only "$SRC/fixtures/dumps/bugs.h5" --json wo.json >/dev/null || fail "verify --weights-only"
	$PY - <<'PYEOF' || fail "cannot write the fixed inputs"
import json
d = json.load(open("res/s0.json")); w = json.load(open("wo.json"))
for name, doc, run, host, day in (("g1", d, "nightA", "box1", 1), ("g2", d, "nightB", "box1", 2),
                                  ("g3", d, "nightB", "box2", 2), ("g4", w, "wo", "box1", 2)):
    when = "2026-12-0%dT02:00:00Z" % day
    json.dump(dict(doc, run_id=run, created=when, machine=dict(doc["machine"], host=host),
                   meta=dict(doc["meta"], run_id=run, host=host, date=when)), open(name + ".json", "w"))
PYEOF
	expect 0 "" "$M" report g1.json g2.json g3.json g4.json g1.json --json g.json
	$PY -c 'import json; print(json.dumps(json.load(open("g.json"))["merge"], indent=1))' >merge.txt
	diff -u "$SRC/tests/cli/golden/report_merge.json" merge.txt || fail "the merge object differs from its golden file"
	;;
markdown) # the benchmarks page: the newest figure of each row, its run's record, its history
	for i in 1 2; do
		MTP_RUN_ID=b$i "$M" bench --backend ref --op rmsnorm,add_rmsnorm --T 1 --H 64 --reps 3 --min-time 0.001 \
			--no-unfused --json raw$i.json >/dev/null || fail "bench $i"
	done
	$PY - <<'PYEOF' || fail "cannot write the records"
import json
old, new = json.load(open("raw1.json")), json.load(open("raw2.json"))
old["record"] = {"section": "S", "title": "the old kernels", "date": "2026-01-01T00:00:00Z", "machine": "box",
                 "prediction": "p-old", "notes": ["line one", "", "| a | b |", "|---|---|", "| 1 | 2 |"]}
new["record"] = {"section": "S", "title": "the new kernels", "date": "2026-01-02T00:00:00Z",
                 "commit": "abc1234", "command": "mtpcheck bench --op rmsnorm", "prediction": "2x faster",
                 "reason": "missed: the row | fits L1"}
new["rows"][0]["prediction"] = "row-pred"
new["rows"][0]["reason"] = "row-why"
json.dump(old, open("old.json", "w")); json.dump(new, open("new.json", "w"))
side = dict(new, record={"section": "T", "variant": "warm", "date": "2026-01-03T00:00:00Z"},
            meta=dict(new["meta"], run_id="c1"))
side2 = dict(side, record={"variant": "warm", "date": "2026-01-04T00:00:00Z"}, meta=dict(new["meta"], run_id="c2"))
json.dump({"format": "mtpcheck-bench-collection", "record": {"section": "T", "notes": ["collection notes"]},
           "runs": [side, side2]}, open("coll.json", "w"))
PYEOF
	expect 0 "and 8 bench rows of 4 night" "$M" report new.json old.json coll.json --markdown a.md
	"$M" report coll.json old.json new.json --markdown b.md >/dev/null || fail "report, other order"
	cmp -s a.md b.md || { diff a.md b.md | head; fail "the page depends on the order of its files"; }
	$PY - <<'PYEOF' || { cat a.md; fail "the page does not say what its records say"; }
import re
t = open("a.md").read()
sec = t.split("\n## ")
s = [x for x in sec if x.startswith("S\n")][0]
rows = [l for l in s.split("\n") if l.startswith("| rmsnorm")]
assert len(rows) == 1 and "[#2](#run-2)" in rows[0] and "row-pred" in rows[0] and "row-why" in rows[0], rows
assert "[1](#row-" in rows[0], rows            # one earlier figure, one click away
t_rows = [l for l in sec[[i for i, x in enumerate(sec) if x.startswith("T\n")][0]].split("\n") if "(warm)" in l]
assert len(t_rows) == 2 and all("[#4](#run-4)" in l for l in t_rows), t_rows  # the collection's newer run
run2 = t[t.index('<a id="run-2">'):t.index('<a id="run-1">')]
for want in ("the new kernels", "- commit: `abc1234`", "- command: `mtpcheck bench --op rmsnorm`",
             "- prediction: 2x faster", "- reason for a miss: missed: the row | fits L1"):
    assert want in run2, want
run1 = t[t.index('<a id="run-1">'):t.index("## Earlier figures")]
assert "- machine: box" in run1 and "\n| a | b |\n|---|---|\n| 1 | 2 |\n" in run1, run1
assert t.count("collection notes") == 1, "a collection's notes once"
early = t[t.index("## Earlier figures"):]
assert re.search(r"rmsnorm T=1 H=64 ref@[^:]*: [0-9.]+ µs[^;]*\[#1\]\(#run-1\); [0-9.]+ µs[^;]*\[#2\]", early), early
PYEOF
	# nothing in it depends on when or where it was written
	"$M" report new.json old.json coll.json --markdown c.md >/dev/null && cmp -s a.md c.md || fail "not reproducible"
	# results files among the inputs: the page is the bench files'
	run_norms res.json
	expect 0 "12 results and 8 bench rows" "$M" report res.json new.json old.json coll.json --markdown d.md
	cmp -s a.md d.md || fail "a results file changed the benchmarks page" ;;
*) fail "unknown test" ;;
esac
echo "ok [$T]"
