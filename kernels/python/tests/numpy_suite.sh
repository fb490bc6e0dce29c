#!/bin/sh
# CTest suite.python.numpy: the default suite on the NumPy adapter, for every
# op of `mtpcheck list ops` but the DSpark ones (SPEC.md §13), which the
# adapter does not implement yet (issue 31); any UNIMPLEMENTED case of the
# others still fails the test. Needs $MTPCHECK; $1 is the case file.
set -u
M=${MTPCHECK:?set MTPCHECK to the mtpcheck binary}
ops=$("$M" list ops | awk '$2 !~ /^§13/ { print $1 }' | paste -sd, -)
[ -n "$ops" ] || { echo "numpy_suite.sh: $M list ops printed no op"; exit 1; }
exec "$M" run --backend python:mtpcheck.adapters.numpy --cases "$1" --op "$ops"
