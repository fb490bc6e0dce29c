# Sourced by the device scripts of tools/bench: `step NAME SECONDS COMMAND...`
# runs COMMAND with a time limit, its output in $out/NAME.txt, and prints its
# exit status, its time and its last lines; a step cut short says so.
step() {
	local name=$1 limit=$2 t0=$SECONDS rc
	shift 2
	timeout "$limit" "$@" >"$out/$name.txt" 2>&1
	rc=$?
	[ $rc = 124 ] && echo "$name: CUT at ${limit}s" >>"$out/$name.txt"
	echo "== $name: exit $rc, $((SECONDS - t0)) s"
	tail -3 "$out/$name.txt"
}
