#!/usr/bin/env bash
# The goldens of the family rows that change one choice (mimo: the hidden
# first into eh_proj; kimi_k3: the pre-norm sum recycled; step3p5: that and
# zero-centred norms), written now by the
# independent generator (tools/gen/mtpgen.py --only family_rows.h5; the
# committed fixtures are at their size budget) and run on the given backends:
# every result PASSED.
# Usage: family_rows.sh MTPCHECK SOURCE_DIR BACKENDS
set -u
M=$1 SRC=$2 B=$3
PY=/usr/bin/python3
W=$(mktemp -d /tmp/mtp-rows.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$PY" -c 'import h5py, numpy' 2>/dev/null || { echo "SKIPPED: no h5py/numpy for $PY"; exit 0; }
"$PY" "$SRC/tools/gen/mtpgen.py" --out "$W" --only family_rows.h5 >/dev/null || exit 1
"$M" run --backend "$B" --fixtures "$W/family_rows.h5" >"$W/log" 2>&1
rc=$?
tail -1 "$W/log"
[ $rc -eq 0 ] && ! grep -qE "FAILED|CRASHED" "$W/log" || { cat "$W/log"; exit 1; }
