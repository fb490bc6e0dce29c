#!/usr/bin/env bash
# The dumps of the bugs seen in the field (SPEC.md §12.4; docs/DIAGNOSES.md):
# regenerate them with the independent generator, check they equal the
# committed fixtures/dumps/field.h5 case by case as mtpcheck judges them (each
# named as its bug, the control passing), and that the rounding-bias test does
# not fire anywhere in the bundled fixtures on ref and cpu. Idempotent; needs
# ./build (tools/ci/test.sh builds it first).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x build/mtpcheck ]; then
	echo "SKIPPED field dumps: build/mtpcheck is not built"; exit 0
fi
/usr/bin/python3 tools/gen/field_dumps.py /tmp/mtp-field.h5
for f in /tmp/mtp-field.h5 fixtures/dumps/field.h5; do
	./build/mtpcheck verify "$f" --json /tmp/mtp-field.json >/tmp/mtp-field.log && { echo "$f: field dumps passed?"; exit 1; } || true
	# each case's verdict and diagnosis code, read from the JSON results
	/usr/bin/python3 - "$f" /tmp/mtp-field.json <<'PY' || { cat /tmp/mtp-field.log; exit 1; }
import json, sys
want = {"layer_reuse": "SPEC_STEP_LAYER_REUSE", "head_overwrite": "SHARED_HEAD_OVERWRITE",
        "head_uninit_zero": "SHARED_HEAD_UNINIT", "head_uninit_garbage": "SHARED_HEAD_UNINIT",
        "embed_uninit": "SHARED_HEAD_UNINIT", "scale_dropped": "QUANT_SCALE_DROPPED",
        "scale_reciprocal": "QUANT_SCALE_DROPPED.reciprocal",
        "scale_transposed": "QUANT_SCALE_DROPPED.transposed",
        "scale_other_layer": "QUANT_SCALE_DROPPED.other_layer", "truncating": "ROUNDING_BIAS",
        "truncating_rmsnorm": "ROUNDING_BIAS", "ok": None}
got = {r["case"]: r for r in json.load(open(sys.argv[2]))["results"]}
bad = 0
for c, d in want.items():
    r = got.get("field." + c)
    code = r and (r.get("diagnosis") or {}).get("code")
    ok = r and (r["verdict"] == "PASSED" if d is None else r["verdict"] == "FAILED" and code == d)
    if not ok:
        print("%s: field.%s: %s, %s (want %s)" % (sys.argv[1], c, r and r["verdict"], code, d or "PASSED"))
        bad = 1
sys.exit(bad)
PY
done
backends=ref
./build/mtpcheck list backends 2>/dev/null | grep -q '^cpu' && backends=ref,cpu
./build/mtpcheck run --backend "$backends" --fixtures fixtures/ --json /tmp/mtp-bias.json >/dev/null ||
	{ echo "bundled fixtures fail on $backends"; exit 1; }
/usr/bin/python3 tools/bias/bias_count.py /tmp/mtp-bias.json | tee /tmp/mtp-bias.txt
awk 'NR > 1 && $4 != 0 { bad = 1 } END { exit bad }' /tmp/mtp-bias.txt ||
	{ echo "ROUNDING_BIAS fired on a correct backend"; exit 1; }
echo "field dumps: all named; rounding-bias test silent on $backends"
