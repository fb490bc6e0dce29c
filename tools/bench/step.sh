# Sourced by tools/bench/device.sh (the device driver): `step NAME SECONDS COMMAND...`
# runs COMMAND with a time limit, its output in $out/NAME.txt, and prints its
# exit status, its time and its last lines; a step cut short says so.
step() {
	local name=$1 limit=$2 t0=$SECONDS rc
	shift 2
	# SIGKILL 15 s after the SIGTERM: a harness that finishes its case in
	# flight (a torch.compile of minutes) must not outlast the device call,
	# which then brings back nothing at all (seen 2026-12-02)
	timeout -k 15 "$limit" "$@" >"$out/$name.txt" 2>&1
	rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && echo "$name: CUT at ${limit}s" >>"$out/$name.txt"
	echo "== $name: exit $rc, $((SECONDS - t0)) s"
	tail -3 "$out/$name.txt"
}
# `cstep NAME SECONDS COMMAND...`: step, its limit cut to what is left of
# $budget seconds of this script ($SECONDS), skipped under 10 s, so that a
# device job ends inside its call and packs its logs; with $STEPS set (names
# separated by spaces), only the steps it names run (a second call that
# measures what a first one's caps cut; the build always runs)
cstep() {
	local name=$1 cap=$2 left=$((budget - SECONDS))
	shift 2
	if [ -n "${STEPS:-}" ] && [ "$name" != build ] &&
		[[ " $STEPS " != *" $name "* ]]; then
		echo "== $name: SKIPPED, not in STEPS"
		return
	fi
	[ $cap -gt $left ] && cap=$left
	if [ $cap -lt 10 ]; then echo "== $name: SKIPPED, no time left"; return; fi
	step "$name" "$cap" "$@"
}
# `job_begin NAME BUDGET` (after sourcing this file): the device job's
# $dest ($OUT, default out), $out (its logs, a fresh /tmp folder), $py (the
# image's torch Python, $PY) and $budget ($BUDGET, default BUDGET seconds),
# and a trap that packs $out into $dest/NAME.tgz when the job exits.
job_begin() {
	dest=${OUT:-out}
	out=$(mktemp -d "/tmp/$1.XXXXXX")
	py=${PY:-/opt/torch/.venv/bin/python}
	budget=${BUDGET:-$2}
	mkdir -p "$dest"
	trap "tar -C '$out' -czf '$dest/$1.tgz' ." EXIT
}
# `cstep_build SECONDS`: the device build (cuda for sm_90, the python backend
# on $py, no tests) into ./build, as a cstep named build; sets $m to the
# built mtpcheck and ends the job if there is none.
cstep_build() {
	cstep build "$1" sh -c "cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DMTP_WITH_CUDA=ON -DMTP_CUDA_ARCHS=90 \
		-DMTP_WITH_PYTHON=ON -DPython3_EXECUTABLE=$py && cmake --build build -j$(nproc)"
	m=./build/mtpcheck
	[ -x $m ] || { echo "no $m: the build failed"; exit 1; }
}
# `verdicts STEP...`: each step's summary line of `mtpcheck run` (or its
# CUT line) and its first FAILED lines, for a job's closing summary
verdicts() {
	local f
	for f in "$@"; do
		[ -f "$out/$f.txt" ] || { printf '%-11s %s\n' $f "no log (skipped)"; continue; }
		printf '%-11s %s\n' $f "$(grep -hE 'results?:|CUT' "$out/$f.txt" | tail -2 | tr '\n' ' ')"
		grep -h "FAIL" "$out/$f.txt" | grep -v "^ *ok" | cut -c1-200 | head -3
	done
}
# `torch_on_cuda` (after $m and $py are set): the torch adapters on the GPU
# (MTP_PYTHON, MTP_TORCH_DEVICE), their backend names $eager and $compiled,
# and $side_bench, the side-by-side bench of docs/BENCHMARKS.md (cuda, torch
# eager and torch.compile in one process, H = 7168, M = 4, graph replay)
torch_on_cuda() {
	export MTP_PYTHON=$py MTP_TORCH_DEVICE=cuda
	eager=python:mtpcheck.adapters.torch:eager
	compiled=python:mtpcheck.adapters.torch:compile
	side_bench="$m bench --backend cuda,$eager,$compiled --H 7168 --M 4 --graph --min-time 0.05"
}
