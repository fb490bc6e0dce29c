#!/usr/bin/env bash
# One report of a GPU backend's nightly shards (the CTest tests
# nightly.BACKEND.shardI, issue 35): BACKEND.html, .xml and .json beside the
# shards' JSON, through `mtpcheck report`, whose exit code (the results')
# this returns. No shard file at all (no device here: each shard said 125)
# is a skip, 125; some shards missing is a failure that names them.
#   nightly_report.sh MTPCHECK DIR BACKEND
set -uo pipefail
m=$1 dir=$2 be=$3
shopt -s nullglob
files=("$dir/$be".shard*.json)
if [ ${#files[@]} = 0 ]; then
	echo "nightly_report: no $dir/$be.shard*.json: nothing ran (no $be device?)"
	exit 125
fi
"$m" report "${files[@]}" --html "$dir/$be.html" --junit "$dir/$be.xml" --json "$dir/$be.json"
rc=$?
echo "nightly_report: ${#files[@]} shard(s) -> $dir/$be.html, $be.xml, $be.json (exit $rc)"
exit $rc
