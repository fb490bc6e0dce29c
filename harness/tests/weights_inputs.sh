#!/usr/bin/env bash
# `mtpcheck audit-weights` against hostile input files (docs/WEIGHTS.md,
# "Inputs"): a FIFO in place of each input kind (--keys, a keys index,
# --params, --modules, --mapping, a checkpoint's index and its safetensors
# files), /dev/zero, and a sparse 30 GB file. Each must be refused at once:
# exit 2 and one line naming the file; never a hang (each run is under
# `timeout`, whose 124 fails the test) or unbounded growth (a memory limit).
# Usage: weights_inputs.sh MTPCHECK SOURCE_DIR
set -u
M=$1 SRC=$2
WL=$SRC/fixtures/weights/deepseek_v4_flash
W=$(mktemp -d /tmp/mtp-wtin.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# The memory limit only keeps a failing run from hurting the machine (the
# line must give the reason, not the symptom of an allocation that failed);
# a sanitizer build reserves terabytes of address space and runs without it
VMEM=1048576
if nm -D "$M" 2>/dev/null | grep -q __asan_init; then VMEM=unlimited; fi
# refused FILE WHY ARGS...: exit 2, one line on stderr naming FILE and
# saying WHY (a regex)
refused() {
	local file=$1 why=$2 rc; shift 2
	(ulimit -v $VMEM; timeout 10 "$M" audit-weights --family deepseek_v4 --layer 43 "$@") >out 2>err
	rc=$?
	[ "$rc" = 2 ] || { fail "$file (${*}): exit $rc, not 2: $(head -c 300 err)"; return; }
	[ "$(wc -l <err)" = 1 ] || fail "$file: not one line: $(head -c 300 err)"
	grep -qF -- "$file" err || fail "$file: the line does not name it: $(cat err)"
	grep -qE -- "$why" err || fail "$file: the line does not say /$why/: $(cat err)"
}
NR='not a regular file' BIG='over the limit of [0-9]+ bytes'

K=(--keys "$WL.keys.txt")
mkfifo fifo
refused fifo "$NR" --keys fifo
refused fifo "$NR" "${K[@]}" --params fifo
refused fifo "$NR" "${K[@]}" --modules fifo
refused fifo "$NR" "${K[@]}" --mapping fifo
refused /dev/zero "$NR" --keys /dev/zero
refused /dev/zero "$NR" "${K[@]}" --params /dev/zero
refused /dev/zero "$NR" "${K[@]}" --modules /dev/zero
refused /dev/zero "$NR" "${K[@]}" --mapping /dev/zero
truncate -s 30G huge.txt
refused huge.txt "$BIG" --keys huge.txt
refused huge.txt "$BIG" "${K[@]}" --params huge.txt
refused huge.txt "$BIG" "${K[@]}" --modules huge.txt
refused huge.txt "$BIG" "${K[@]}" --mapping huge.txt
# a sparse keys file that starts like an index (the JSON path)
printf '{"weight_map": {' >huge.json && truncate -s 30G huge.json
refused huge.json "$BIG" --keys huge.json
# checkpoint folders: the index, an indexed file, a file of a folder
# without an index, each a FIFO; a sparse 30 GB safetensors file
mkdir ix plain sparse
mkfifo ix/model.safetensors.index.json plain/a.safetensors
refused ix/model.safetensors.index.json "$NR" --checkpoint ix
printf '{"weight_map": {"mtp.0.enorm.weight": "m1.safetensors"}}' >ix2.json
mkdir ix2 && mv ix2.json ix2/model.safetensors.index.json && mkfifo ix2/m1.safetensors
refused ix2/m1.safetensors "$NR" --checkpoint ix2
refused plain/a.safetensors "$NR" --checkpoint plain
truncate -s 30G sparse/a.safetensors
refused sparse/a.safetensors "header" --checkpoint sparse
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "audit-weights: every FIFO, /dev/zero and sparse 30 GB input refused in one line (exit 2)"
