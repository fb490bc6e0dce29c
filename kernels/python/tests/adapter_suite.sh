#!/bin/sh
# `mtpcheck run --backend BACKEND ARGS...` over every op of `mtpcheck list ops`
# but the DSpark ones (SPEC.md §13), which the shipped Python adapters do not
# implement yet (issue 31): CTest suite.python.numpy and tools/ci/torch_adapter.sh,
# which fail on any UNIMPLEMENTED case of the others. Needs $MTPCHECK.
set -u
M=${MTPCHECK:?set MTPCHECK to the mtpcheck binary}
[ $# -ge 1 ] || { echo "usage: adapter_suite.sh BACKEND [RUN ARGS...]"; exit 2; }
backend=$1
shift
ops=$("$M" list ops | awk '$2 !~ /^§13/ { print $1 }' | paste -sd, -)
[ -n "$ops" ] || { echo "adapter_suite.sh: $M list ops printed no op"; exit 1; }
exec "$M" run --backend "$backend" --op "$ops" "$@"
