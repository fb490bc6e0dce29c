#!/usr/bin/env bash
# One H200 call (under 10 minutes): re-validates the tree after the
# subsystem folders and the GPU composition layer (issue 14), and collects
# the evidence on eh_proj's element check at T = 512 (issue 15).
#  - builds this tree (cuda + the python backend on the image's torch) and,
#    when BASE_TGZ names a `git archive` tarball of an earlier tree, that
#    tree too (cuda only), at the same time;
#  - the cuda selftest, the fixture suite on ref and cuda, the nightly
#    composite cases, compute-sanitizer (memcheck on the selftest and the
#    fixtures, racecheck and synccheck on the kernels with shared memory,
#    initcheck on the norms), each time-capped;
#  - one bench row per op (T = 64, H = 4096, graph replay) of both trees in
#    one process each, this tree's compared with the earlier one's
#    (--baseline: FASTER / SLOWER / SAME per row);
#  - eh_proj at T = 64 and 512, H = 7168 judged by `mtpcheck run` on cuda
#    and torch eager (the JSON keeps the worst element and its threshold),
#    and tools/bench/gemm_acc.py: the error of cuBLAS's bf16 GEMM at that
#    shape against float64, per element and against sum |w||x|.
# Logs into $OUT/h200_validate.tgz. Run from the repository root.
set -uo pipefail
. "$(dirname "$0")/step.sh"
job_begin h200_validate 570
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
git log -1 --format='tree of %h %s' 2>/dev/null || true
opts="-DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90"
base=
if [ -n "${BASE_TGZ:-}" ] && [ -f "$BASE_TGZ" ]; then
	mkdir -p /tmp/basesrc && tar -xzf "$BASE_TGZ" -C /tmp/basesrc && base=/tmp/basebuild
fi
cstep build 200 sh -c "
	{ [ -z '$base' ] || { cmake -S /tmp/basesrc -B /tmp/basebuild $opts && cmake --build /tmp/basebuild -j8; } >$out/build_base.txt 2>&1; } &
	cmake -S . -B build $opts -DMTP_WITH_PYTHON=ON -DPython3_EXECUTABLE=$py && cmake --build build -j8; r=\$?; wait; exit \$r"
m=./build/mtpcheck
[ -x $m ] || exit 1
[ -n "$base" ] && { [ -x /tmp/basebuild/mtpcheck ] || { echo "the earlier tree did not build"; tail -5 "$out/build_base.txt"; base=; }; }
grep -E "CUDA backend|python backend" "$out/build.txt" | head -3
cstep selftest 40 ./build/mtp_nv_selftest cuda
cstep fixtures 60 $m run --backend ref,cuda --fixtures fixtures/ --json "$out/fixtures.json"
cstep quick 40 $m run --backend cuda --json "$out/quick.json"
cstep nightly_comp 90 $m run --backend ref,cuda --cases cases/nightly.case --op mtp_step,draft_chain,mtp_block \
	--json "$out/nightly-comp.json"
san() { # name, cap, tool, command...
	local name=$1 cap=$2 tool=$3
	shift 3
	cstep "$name" "$cap" compute-sanitizer --tool "$tool" --error-exitcode 9 "$@"
	echo "   $(grep -c -E '^========= (Invalid|Race|Barrier|Uninit|Error)' "$out/$name.txt") reports; $(grep -m1 'ERROR SUMMARY' "$out/$name.txt")"
}
san memcheck_selftest 70 memcheck --leak-check full ./build/mtp_nv_selftest cuda
san memcheck_fixtures 60 memcheck $m run --backend cuda --fixtures fixtures/
san racecheck 40 racecheck ./build/mtp_nv_selftest cuda hc_
san synccheck 30 synccheck ./build/mtp_nv_selftest cuda hc_
san initcheck 30 initcheck ./build/mtp_nv_selftest cuda norm
ops() { "$1" list ops | awk '{print $1}' | paste -sd, -; }
bench="bench --backend cuda --T 64 --H 4096 --graph --no-unfused --min-time 0.02"
cmp=()
if [ -n "$base" ]; then
	cstep bench_before 60 /tmp/basebuild/mtpcheck $bench --op "$(ops /tmp/basebuild/mtpcheck)" \
		--json "$out/bench-before.json" && cmp=(--baseline "$out/bench-before.json")
fi
cstep bench_after 60 $m $bench --op "$(ops $m)" --json "$out/bench-after.json" --md "$out/bench.md" "${cmp[@]}"
printf 'op=eh_proj family=deepseek_v3 T=64,512 H=7168 tags=h200\n' >"$out/eh.case"
export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
cstep eh_proj 90 $m run --backend cuda,python:mtpcheck.adapters.torch:eager --cases "$out/eh.case" \
	--json "$out/eh.json"
cstep gemm_acc 40 $py tools/bench/gemm_acc.py
python3 - "$out" <<'PY' 2>&1 | tee "$out/summary.txt"
import json, sys, glob, os
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    try:
        j = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable", e); continue
    res = j.get("results")
    if not isinstance(res, list):
        continue
    cnt = {}
    for r in res:
        cnt[r.get("verdict")] = cnt.get(r.get("verdict"), 0) + 1
    print(os.path.basename(f), cnt)
    for r in res:
        if r.get("verdict") not in ("PASSED", "SKIPPED", "UNIMPLEMENTED"):
            outs = [(o.get("tensor"), o.get("bad"), o.get("elements"), o.get("headroom"),
                     o.get("worst_got"), o.get("worst_want"), o.get("ulp_histogram"))
                    for o in r.get("outputs", []) if not o.get("passed", True)]
            print("  ", r.get("backend"), r.get("case"), r.get("verdict"),
                  (r.get("diagnosis") or {}).get("code"), (r.get("message") or "")[:200], outs[:2])
PY
grep -E "FASTER|SLOWER|SAME" "$out/bench.md" | awk '{print}' | cut -c1-160 | head -60
echo "total $SECONDS s"
