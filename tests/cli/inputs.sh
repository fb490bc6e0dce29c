#!/usr/bin/env bash
# The CLI against hostile inputs and the newcomer's traps (docs/CI.md,
# "Guarantees: inputs"): one CTest test per class, each running the real mtpcheck on
# files crafted at run time (craft.py) and checking the exit code and the one
# line it prints. Usage: inputs.sh TEST MTPCHECK SOURCE_DIR PLUGIN_SO
set -u
T=$1 M=$2 SRC=$3 PLUGIN=${4:-}
PY=/usr/bin/python3
W=$(mktemp -d /tmp/mtp-inputs.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
fail() { echo "FAIL [$T]: $*"; exit 1; }
craft() { $PY "$SRC/tests/cli/craft.py" "$1" "$W/$1.h5" "$SRC/fixtures" || fail "craft $1"; }
# expect CODE PATTERN CMD...: exit code and a line matching PATTERN (stdout+err)
expect() {
	local code=$1 pat=$2; shift 2
	timeout 60 "$@" >"$W/out" 2>&1; local rc=$?
	[ "$rc" = "$code" ] || { tail -5 "$W/out"; fail "'$*' exited $rc, not $code"; }
	[ -z "$pat" ] || grep -Eq -- "$pat" "$W/out" || { tail -5 "$W/out"; fail "'$*': no line matching /$pat/"; }
}
no_case_ran() { ! grep -q '^\[ *1/' "$W/out" || fail "a case ran before the error"; }

case $T in
links) # rule 12: nothing outside the file, no link in a v2 file's observed/
	for k in extlink extlink_case softlink_group softlink_relative softlink_observed; do
		craft $k; expect 2 "$k.h5: /cases/.*link" "$M" run --fixtures $k.h5
	done
	craft softlink_ok; timeout 60 "$M" run --fixtures softlink_ok.h5 >out 2>&1
	[ $? != 2 ] || fail "a soft link to a dataset of another case is refused" ;;
storage) # rule 13: contiguous/chunked, in the file, deflate/shuffle/fletcher32
	craft filter; expect 2 "inputs/x: filter 6 \(scaleoffset\) is refused" "$M" run --fixtures filter.h5
	craft external_storage; expect 2 "inputs/x: its data is stored in external files" "$M" run --fixtures external_storage.h5
	craft filter_ok; expect 0 "2 PASSED" "$M" run --fixtures filter_ok.h5 ;;
membudget) # two 2 GiB datasets declared in a small sparse file
	craft sparse; [ "$(stat -c %s sparse.h5)" -lt 1000000 ] || fail "sparse file too big"
	# 2 GiB of input x, 2 GiB of expected y, 3 copies of y in the harness,
	# and the worker's copies of x and y (2 each): 18 GiB
	expect 2 "sparse.h5: /cases/huge: needs 18.0 GiB .* over the budget of 1.0 GiB .*--mem-limit" \
		"$M" run --fixtures sparse.h5 --mem-limit 1G
	# the default budget (half the machine's memory) refuses it too, where
	# the machine has less than 36 GiB
	if [ "$(awk '/MemTotal/ {print $2}' /proc/meminfo)" -lt 37748736 ]; then
		expect 2 "sparse.h5: /cases/huge: needs 18.0 GiB .* over the budget of" "$M" run --fixtures sparse.h5
	fi
	expect 2 "sparse.h5: /cases/huge: needs" "$M" verify sparse.h5 --mem-limit 512M
	expect 2 "--mem-limit: 'lots'" "$M" run --mem-limit lots
	expect 2 "quick.case:[0-9]+:1: gen\..*needs .* over the budget" "$M" run --mem-limit 1M
	no_case_ran ;;
verify_empty) # a due output that is empty or absent never passes
	craft verify_empty; expect 1 "FAILED .*y: shape \[0, ?256\], expected \[3, ?256\]" "$M" verify verify_empty.h5
	craft verify_noobs; expect 2 "INVALID .*no observed/ datasets" "$M" verify verify_noobs.h5
	craft verify_ok; expect 0 "1 PASSED" "$M" verify verify_ok.h5 ;;
sources) # FIFOs, folders, many sources, empty folders, missing plugins
	mkfifo fifo; mkdir empty
	expect 2 "fifo: cannot read: not a regular file \(a FIFO\)" "$M" run --cases fifo
	echo "include=fifo" >inc.case; expect 2 "inc.case:1:9: cannot read include 'fifo': not a regular file" "$M" run --cases inc.case
	echo "fixtures=fifo" >fx.case; expect 2 "fx.case:1:10: 'fifo' is neither a regular file nor a folder" "$M" run --cases fx.case
	expect 2 "fifo: /: cannot open the file: not a regular file \(a FIFO\)" "$M" run --fixtures fifo
	expect 2 "empty: no \*.h5 file in the folder" "$M" run --fixtures empty
	expect 2 "--backend-lib $W/none.so: No such file" "$M" run --backend-lib "$W/none.so"
	echo "op=rmsnorm R=1 H=1x" >bad.case; expect 2 "bad.case:1:18" "$M" run --cases bad.case --list
	craft filter_ok; : >many.case
	for i in $(seq 1 140); do ln -s filter_ok.h5 f$i.h5; echo "fixtures=f$i.h5" >>many.case; done
	expect 0 "286 results: 286 PASSED" "$M" run --cases many.case --fixtures f1.h5 --fixtures f2.h5 --fixtures f3.h5 ;;
rules) # FORMAT.md rules a golden must keep (chain_missing_step: a v2 golden)
	craft chain_missing_step; expect 2 "expected/step.1/.*: missing" "$M" run --fixtures chain_missing_step.h5
	craft dtype_bytes; expect 2 "inputs/x: dtype 'bf.*\\\\x07' is not a docs/FORMAT.md dtype" "$M" run --fixtures dtype_bytes.h5
	iconv -f UTF-8 -t UTF-8 out >/dev/null 2>&1 || fail "the error line is not valid UTF-8"
	grep -q $'\x07' out && fail "a control character reached the console"
	craft fv_float; expect 2 "fv_float.h5: /: format_version must be an integer" "$M" run --fixtures fv_float.h5
	for k in rtol_big atol_nan; do craft $k; expect 2 "expected/y: (tolerance override|rtol/atol)" "$M" run --fixtures $k.h5; done
	craft atol_huge; expect 2 "atol 1e\+300 is at or above" "$M" run --fixtures atol_huge.h5
	craft atol_vacuous; expect 2 "atol 50 is at or above the tensor's largest magnitude" "$M" run --fixtures atol_vacuous.h5
	craft atol_ok; expect 0 "" "$M" run --fixtures atol_ok.h5 --json ok.json
	grep -q '"fixture: test override"' ok.json || fail "override not reported in the JSON"
	craft obs_dtype; expect 2 "observed/y: stored as float32, but the case declares bfloat16" "$M" verify obs_dtype.h5 ;;
pipe) # a console piped into head, reports through symlinks and new folders
	ln -s real.json link.json
	"$M" run -v --fixtures "$SRC/fixtures/norms.h5" --json link.json --html rep/sub/r.html | head -1 >/dev/null
	rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "piped run exited $rc"
	[ -L link.json ] || fail "the symlink was replaced"
	grep -q '"verdict":"PASSED"' real.json || fail "no report through the link"
	[ -s rep/sub/r.html ] || fail "the report folder was not created"
	: >ro; expect 2 "cannot write" "$M" run --fixtures "$SRC/fixtures/norms.h5" --json ro/x.json
	no_case_ran ;;
preflight) # typos and unwritable reports are found before the first case
	expect 2 "--backend rfe: unknown backend; did you mean 'ref'" "$M" run --backend ref,rfe
	no_case_ran
	expect 2 "--backend mutant:NOPE: no mutant 'NOPE'" "$M" run --backend mutant:NOPE
	expect 2 "--filter nosuch: selects no case" "$M" run --fixtures "$SRC/fixtures/norms.h5" --filter nosuch
	no_case_ran
	expect 2 "unexpected argument '--json'" "$M" list ops --json ;;
seed) # --seed reaches the generated cases; the default is recorded truthfully
	echo "op=lm_head T=4 H=64 V=256" >g.case
	expect 0 "gen.lm_head.*\.s7 " "$M" run --cases g.case --seed 7 --list
	expect 0 "gen.lm_head.*\.s1 " "$M" run --cases g.case --list
	expect 0 "" "$M" run --cases g.case --json d.json
	grep -q '"seed":1,' d.json || fail "default seed not recorded as 1"
	grep -q '"run_id":"' d.json || fail "no run_id"
	expect 0 "" "$M" run --cases g.case --seed 7 --json d7.json
	grep -q '"seed":7,' d7.json && grep -q 'T4.H64.V256.s7"' d7.json || fail "seed 7 not used"
	expect 0 "        logits .* rtol" "$M" run --cases g.case -v ;;
repro) # repro lines replay the same verdict from any folder
	cd "$SRC"
	"$M" run --backend mutant:PRE_NORM_RECYCLE --fixtures fixtures/steps_v3.h5 --isolate --timeout 60 \
		--seed 3 --mem-limit 8G >"$W/out" 2>&1
	line=$(grep -m1 'repro:' "$W/out" | sed 's/.*repro: //')
	case "$line" in *"--isolate --timeout 60"*"--seed 3"*"--mem-limit 8G"*) ;; *) fail "repro lacks options: $line";; esac
	cd "$W" && mkdir -p elsewhere && cd elsewhere
	eval "\"$M\" ${line#mtpcheck }" >"$W/out2" 2>&1; rc=$?
	[ $rc = 1 ] && grep -q "FAILED" "$W/out2" || fail "replayed repro exited $rc: $line"
	if [ -n "$PLUGIN" ]; then
		echo "op=rmsnorm R=2 H=64" >"$W/hang.case"
		expect 1 "TIMEOUT" "$M" run --backend faulty --backend-lib "$PLUGIN" --cases "$W/hang.case" --timeout 2
		grep -Eq "repro: .*--backend-lib /.*--cases /.*--timeout 2" "$W/out" || fail "TIMEOUT without a full repro"
	fi ;;
selftest) # --json, and a filter that leaves a mutant nothing to break (float32
	# rmsnorm: no layer, head or scale to change, and the truncating-store
	# mutant of ROUNDING_BIAS, like BATCH_VARIANT's and NONDETERMINISTIC's,
	# changes bf16/f16 outputs only)
	expect 125 "NOT APPLICABLE" "$M" selftest --backend ref --fixtures "$SRC/fixtures/edge.h5" --filter 'rmsnorm.fp32.*' --json st.json
	grep -q '"verdict":"NOT APPLICABLE"' st.json || fail "selftest --json wrote no rows"
	grep -Eq '"schema_version":"2\.[0-9]+","meta":\{"tool":"mtpcheck"' st.json || fail "selftest --json without its metadata"
	grep -q '"exit_code":125' st.json || fail "selftest --json without its exit code"
	expect 2 "drop --json" "$M" audit-weights --selftest --json aw.json ;;
report) # help matches, inf stays inf, shards share a column, exit 1 on failures,
	# a PASSED that compared nothing is SKIPPED, one its outputs deny INVALID; bench files make a
	# history; bad ones are one line; device lines recorded
	expect 0 "--json FILE" "$M" report --help
	expect 0 "--junit FILE" "$M" verify --help
	"$M" run --fixtures "$SRC/fixtures/norms.h5" --filter 'rmsnorm.*' --run-id night1 --shard 0/2 --json s0.json >/dev/null
	"$M" run --fixtures "$SRC/fixtures/norms.h5" --filter 'rmsnorm.*' --run-id night1 --shard 1/2 --json s1.json >/dev/null
	$PY - <<'PYEOF' || fail "cannot write the failing results file"
import json
d = json.load(open("s0.json"))
r = dict(d["results"][0], verdict="FAILED", outputs=[dict(d["results"][0]["outputs"][0], headroom="inf")])
d["results"] = [r]; d["run_id"] = "other"
json.dump(d, open("bad.json", "w"))
PYEOF
	expect 0 "" "$M" report s0.json s1.json --json m.json --html m.html
	[ "$($PY -c 'import json; print(len({r["backend"] for r in json.load(open("m.json"))["results"]}))')" = 1 ] ||
		fail "shards of one run in several columns"
	expect 1 "exit code 1" "$M" report s0.json bad.json --html b.html
	grep -q '[0-9]\{30\}' b.html && fail "inf headroom rendered as a long number"
	grep -q 'inf' b.html || fail "inf headroom not shown"
	# a PASSED that compared nothing (outputs empty, or of no element) is
	# SKIPPED, not passed; one its outputs deny is INVALID (exit 2); a result
	# without its outputs is refused with one line
	$PY - <<'PYEOF' || fail "cannot write the results files without outputs"
import json
d = json.load(open("s0.json"))
assert d["results"][0]["verdict"] == "PASSED" and d["results"][0]["outputs"]
lie = dict(d["results"][0]["outputs"][0], passed=False)
none = dict(d["results"][0]["outputs"][0], elements=0)
for name, outs in (("empty.json", []), ("absent.json", None), ("denied.json", [lie]), ("zero.json", [none])):
    r = dict(d["results"][0])
    if outs is None:
        del r["outputs"]
    else:
        r["outputs"] = outs
    e = dict(d, results=[r], run_id=name)
    json.dump(e, open(name, "w"))
PYEOF
	expect 2 "^mtpcheck report: absent.json: results\[0\]\.outputs: missing$" "$M" report absent.json --json absent.m.json
	for k in empty denied zero; do
		code=125; [ $k = denied ] && code=2
		expect $code "exit code $code" "$M" report $k.json --json $k.m.json
		$PY - "$k.m.json" "$k" $code <<'PYEOF' || fail "$k: the PASSED without (passing) outputs was counted as passed"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
want = ("INVALID", "did not pass") if sys.argv[2] == "denied" else ("SKIPPED", "nothing compared")
assert len(r) == 1 and r[0]["verdict"] == want[0], r
assert want[1] in r[0]["message"], r[0]["message"]
assert d["exit_code"] == int(sys.argv[3]) and "PASSED" not in d["summary"], d
PYEOF
	done
	# bench files: a history of nights beside the results, or alone
	for n in 1 2; do
		MTP_RUN_ID=bench$n "$M" bench --backend ref --op rmsnorm --T 1,4 --H 64 --reps 3 --min-time 0.001 \
			--no-unfused --json bench$n.json >/dev/null || fail "bench night $n"
	done
	expect 0 "[0-9]+ results and 4 bench rows of 2 night\(s\) from 3 file" "$M" report s0.json bench1.json bench2.json --html h.html --json h.json
	grep -q 'id="benchhist"' h.html && grep -q '<th>#2 ' h.html && grep -q 'id="matrix"' h.html ||
		fail "no bench history beside the results"
	[ "$(grep -c '<tr><td>rmsnorm</td><td>T=' h.html)" = 2 ] || fail "not one row per op, shape and backend@host"
	grep -q '"format":"mtpcheck-results"' h.json || fail "report --json of mixed inputs is not a results file"
	expect 0 "0 results and 4 bench rows" "$M" report bench1.json bench2.json --html ho.html
	grep -q 'id="failures"' ho.html && fail "a bench-only page has a failures section"
	expect 1 "exit code 1" "$M" report bad.json bench1.json --html hb.html
	# bad bench files: one line naming the file and the field, exit 2
	$PY - <<'PYEOF' || fail "cannot write the bad bench files"
import json
d = json.load(open("bench1.json"))
e = dict(d); e["rows"] = [dict(d["rows"][0])]; del e["rows"][0]["median_s"]
json.dump(e, open("nomedian.json", "w"))
e["rows"] = [dict(d["rows"][0], samples_s=[1e-6, "x"])]
json.dump(e, open("badsample.json", "w"))
json.dump(dict(d, schema_version="3.0"), open("newbench.json", "w"))
json.dump(dict(d, format="mtpcheck-other"), open("other.json", "w"))
PYEOF
	expect 2 "^mtpcheck report: nomedian.json: rows\[0\]\.median_s: missing$" "$M" report s0.json nomedian.json --html x.html
	[ "$(wc -l <"$W/out")" = 1 ] || fail "more than one line for a bad bench row"
	expect 2 "badsample.json: rows\[0\]\.samples_s\[1\]: not a finite number" "$M" report badsample.json --html x.html
	expect 2 "newbench.json: schema_version 3.0 is newer than this mtpcheck reads" "$M" report newbench.json --html x.html
	[ "$(wc -l <"$W/out")" = 1 ] || fail "more than one line for a newer bench schema"
	expect 2 "other.json: format: not an mtpcheck results or bench file" "$M" report other.json --html x.html
	[ -e x.html ] && fail "a page was written from a bad input"
	# the device line of every backend that ran, from its worker
	be=ref; "$M" list backends | grep -q '^cpu ' && be=ref,cpu
	expect 0 "" "$M" run --backend $be --fixtures "$SRC/fixtures/norms.h5" --filter 'rmsnorm.*' --json d.json --junit d.xml
	$PY - "$be" <<'PYEOF' || fail "the device lines are not in the JSON"
import json, sys
dev = {b["name"]: b["device"] for b in json.load(open("d.json"))["meta"]["backends"]}
want = {"ref": "scalar C reference", "cpu": "host CPU"}
for name in sys.argv[1].split(","):
    assert dev.get(name, "").startswith(want[name]), (name, dev)
PYEOF
	grep -q '<property name="device.ref" value="scalar C reference' d.xml || fail "no device property in the JUnit"
	expect 0 "" "$M" report d.json --json dm.json
	grep -Eq '"name":"ref@[^"]*","device":"scalar C reference' dm.json || fail "report drops the files' device lines" ;;
cwd_ids) # the file part of a case's name does not depend on the folder
	(cd "$SRC" && "$M" run --list --fixtures fixtures/norms.h5) >a.txt
	(cd / && "$M" run --list --fixtures "$SRC/fixtures/norms.h5") >b.txt
	(cd "$SRC/fixtures" && "$M" run --list --fixtures norms.h5) >c.txt
	cmp -s a.txt b.txt && cmp -s a.txt c.txt || fail "ids differ by folder: $(diff a.txt b.txt | head -3)"
	grep -q '^fixtures/norms.h5:rmsnorm' a.txt || fail "unexpected id form: $(head -1 a.txt)"
	printf 'fixtures=%s/fixtures/norms.h5\nop=rmsnorm R=2 H=8\n' "$SRC" >"$SRC/build-cwd-$$.case"
	(cd / && "$M" run --list --cases "$SRC/build-cwd-$$.case") >d.txt
	(cd "$SRC" && "$M" run --list --cases "build-cwd-$$.case") >e.txt
	rm -f "$SRC/build-cwd-$$.case"
	cmp -s d.txt e.txt || fail "case-file ids differ by folder: $(diff d.txt e.txt | head -3)" ;;
bench_interrupt) # a CI time limit's SIGTERM: the bench ends after its row, JSON closed (each row
	# takes 0.5 s at least: on an idle machine the 8 rows once ended before the signal came)
	"$M" bench --backend ref --op hc_pre --T 1,2,3,4,5,6,7,8 --H 7168 --no-unfused --min-time 0.5 \
		--json b.json >b.txt 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q '^hc_pre ' b.txt && break; sleep 0.1; done
	kill -TERM $pid; wait $pid; rc=$?
	[ $rc = 143 ] || { tail -3 b.txt; fail "bench exited $rc after SIGTERM, not 143"; }
	grep -q 'interrupted by signal 15' b.txt || fail "no interruption line"
	$PY -c 'import json,sys; d=json.load(open("b.json")); sys.exit(not (d["interrupted_by_signal"] == 15 and 1 <= len(d["rows"]) < 8))' ||
		fail "the bench JSON is not a closed document with the rows done: $(tail -c 200 b.json)" ;;
bench_interrupt_twice) # GNU timeout delivers its signal twice: to the command, then to its group
	# (before the fix, 3 runs of 6 left an empty or cut JSON)
	for i in 1 2 3; do
		timeout 2 "$M" bench --backend ref --op hc_pre --T 64,128,256,512,1024,2048 --H 7168 --no-unfused \
			--json b$i.json >b$i.txt 2>&1
		rc=$?
		[ $rc = 124 ] || { tail -3 b$i.txt; fail "run $i: exit $rc under timeout 2, not 124"; }
		$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["interrupted_by_signal"] != 15)' b$i.json ||
			fail "run $i: the bench JSON is not a closed document after timeout's SIGTERM: $(tail -c 200 b$i.json)"
	done ;;
empty_selection) # a selection of no case says so in one line, and exits 125 (nothing tested)
	expect 125 "^mtpcheck: no case matched the selection: --tags nosuchtag in .*cases/quick.case \(its tags: quick\)$" \
		"$M" run --tags nosuchtag
	[ "$(wc -l <"$W/out")" -le 3 ] || fail "more than the line and the summary: $(cat "$W/out")"
	# the tags emptied it, not the filter: the line names the tags
	expect 125 "no case matched the selection: --tags nosuchtag in .*quick.case" \
		"$M" run --tags nosuchtag --filter 'rmsnorm.*'
	printf 'op=rmsnorm R=2,3 H=8 tags=a\n' >t.case
	expect 125 "^mtpcheck: no case matched the selection: --shard 3/4 of 2 cases$" \
		"$M" run --cases t.case --shard 3/4
	: >e.case
	expect 125 "^mtpcheck: no case matched the selection: .*e.case has no entries$" "$M" run --cases e.case ;;
open_interrupt) # SIGTERM while a backend opens ends the run at once (no restart as if it crashed),
	# the reports written and marked, exit 143; a second SIGTERM 1.2 s later still leaves them complete;
	# with --isolate the case whose open it cut is SKIPPED, not CRASHED
	[ -n "$PLUGIN" ] || fail "needs the faulty plugin"
	echo "op=rmsnorm R=4,5,6 H=64" >t.case
	for mode in 0 1 0--isolate; do
		twice=${mode:0:1} iso=${mode:1}
		rm -f mark r.json r.xml
		MTP_FAULTY_OPEN_HANG=$W/mark "$M" run --backend faulty,ref --backend-lib "$PLUGIN" --cases t.case \
			--timeout 5 --json r.json --junit r.xml $iso >o.txt 2>&1 &
		pid=$!
		for _ in $(seq 300); do [ -e mark ] && break; sleep 0.1; done
		[ -e mark ] || { kill -KILL $pid; fail "the plugin's open was not reached"; }
		t0=$(date +%s)
		kill -TERM $pid
		[ $twice = 0 ] || { sleep 1.2; kill -TERM $pid 2>/dev/null; }
		for _ in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
		kill -0 $pid 2>/dev/null && { kill -KILL $pid; wait $pid; fail "still running 15 s after SIGTERM in open"; }
		wait $pid; rc=$?
		[ $rc = 143 ] || { tail -3 o.txt; fail "exit $rc after SIGTERM in open, not 143"; }
		[ $(($(date +%s) - t0)) -le 5 ] || fail "SIGTERM in open took $(($(date +%s) - t0)) s"
		! grep -Eq "starting it once more|CRASHED" o.txt || fail "the killed worker taken for a crash: $(cat o.txt)"
		$PY - "$iso" <<'PYEOF' || fail "$mode: the reports are not complete and marked: $(tail -c 300 r.json)"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open("r.json"))
assert d["interrupted_by_signal"] == 15 and d["exit_code"] == 143, d
# --isolate opens per case: the case whose open the signal cut is SKIPPED
want = [("faulty", "SKIPPED")] if sys.argv[1] else []
assert [(r["backend"], r["verdict"]) for r in d["results"]] == want, d["results"]
assert all("interrupted (signal 15)" in r["message"] for r in d["results"]), d["results"]
ET.parse("r.xml")
PYEOF
	done ;;
open_hang) # a backend that hangs in open costs the open's time once, not once per case (and never a retry)
	[ -n "$PLUGIN" ] || fail "needs the faulty plugin"
	echo "op=rmsnorm R=4,5,6,7 H=64" >t.case
	for iso in "" --isolate; do
		t0=$(date +%s)
		expect 1 "" env MTP_FAULTY_OPEN_HANG=$W/mark MTP_OPEN_TIMEOUT_S=2 "$M" run --backend faulty,ref \
			--backend-lib "$PLUGIN" --cases t.case --timeout 5 $iso --json h.json
		[ $(($(date +%s) - t0)) -le 4 ] || fail "$iso: a hang in open cost $(($(date +%s) - t0)) s, not 2"
		$PY - <<'PYEOF' || fail "$iso: not one TIMEOUT and then SKIPPED 'hung in open': $(cat out)"
import json
r = json.load(open("h.json"))["results"]
f = [x for x in r if x["backend"] == "faulty"]
assert [x["verdict"] for x in f] == ["TIMEOUT"] + ["SKIPPED"] * 3, f
assert "hung, no answer within 2 s" in f[0]["message"], f[0]
assert all(x["message"] == "backend faulty hung in open (2 s); not started again" for x in f[1:]), f
assert [x["verdict"] for x in r if x["backend"] == "ref"] == ["PASSED"] * 4, r
PYEOF
	done ;;
progress) # a log gets a heartbeat: none in a short run, one per result at MTP_PROGRESS_S=0
	printf 'op=rmsnorm R=2,3,4 H=8\n' >p.case
	"$M" run --backend ref --cases p.case >a.txt 2>&1 || fail "run failed: $(tail -3 a.txt)"
	! grep -q '^progress:' a.txt || fail "a 3-case run printed a heartbeat: $(grep progress: a.txt | head -1)"
	MTP_PROGRESS_S=0 "$M" run --backend ref --cases p.case >b.txt 2>&1 || fail "run failed: $(tail -3 b.txt)"
	[ "$(grep -c '^progress: \[[12]/3\] [12] PASSED after [0-9]* s$' b.txt)" = 2 ] ||
		fail "MTP_PROGRESS_S=0: want a heartbeat after results 1 and 2 of 3: $(cat b.txt)"
	MTP_PROGRESS_S=0 "$M" run -q --backend ref --cases p.case >c.txt 2>&1
	! grep -q '^progress:' c.txt || fail "-q printed a heartbeat" ;;
*) fail "unknown test" ;;
esac
echo "ok [$T]"
