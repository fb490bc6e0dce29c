#!/usr/bin/env bash
# The one option table (harness/src/cli/options.c) as every command sees it:
# `mtpcheck list options` lists each command's options once; each command's
# --help shows each of them; an option that takes a value given without one,
# an option of another command, and a value out of range are each refused in
# one line naming the option, exit 2, before anything runs. (bench --op with
# more ops than there are overflowed its op array and crashed, exit 139.)
# Usage: options.sh MTPCHECK
set -u
M=$1
W=$(mktemp -d /tmp/mtp-options.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL [options]: $*"; exit 1; }
# refused NAMED CMD ARGS...: exit 2, one line, naming NAMED
refused() {
	local named=$1; shift
	timeout 60 "$M" "$@" >"$W/out" 2>&1; local rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$W/out")" = 1 ] && grep -qF -- "$named" "$W/out" ||
		{ cat "$W/out"; fail "'$*' exited $rc (want 2, one line naming $named)"; }
}

"$M" list options >"$W/opts" || fail "list options exited $?"
[ "$(wc -l <"$W/opts")" -gt 80 ] || fail "list options printed $(wc -l <"$W/opts") lines"
dups=$(awk '{print $1, $2}' "$W/opts" | sort | uniq -d)
[ -z "$dups" ] || fail "an option twice for one command: $dups"
cmds=$(awk '{print $1}' "$W/opts" | uniq)
for c in $cmds; do
	"$M" "$c" --help >"$W/help" || fail "$c --help exited $?"
	awk -v c="$c" '$1 == c && $2 ~ /^-/ {print $2, ($3 ~ /^[A-Z]/ ? $3 : "")}' "$W/opts" |
		while read -r opt arg; do
			grep -Eq -- "(^|[ ,])$opt( |,|$)" "$W/help" || fail "$c --help lacks $opt"
			if [ -n "$arg" ]; then refused "option $opt needs a value" "$c" "$opt"; fi
		done || exit 1
done
# each command refuses every other command's option it does not take
awk '{print $1, $2}' "$W/opts" | grep ' -' | sort -u -k2,2 | while read -r owner opt; do
	for c in $cmds; do
		if ! grep -q "^$c  *$opt " "$W/opts"; then
			refused "$opt is an option of mtpcheck" "$c" "$opt"
		fi
	done
done || exit 1
refused "unknown argument '--nope'" run --nope
# verify takes several dumps (the rank files of one TP step, FORMAT.md), at most 64
refused "more than 64 dumps" verify $(seq -f 'd%g.h5' 1 65)
# values out of range
many=$(printf 'rmsnorm,%.0s' $(seq 1 40))
refused "--op: more than" bench --backend ref --op "$many" --T 1 --H 64 --reps 1
refused "--min-time: 'x'" bench --min-time x
refused "--T: '0,4'" bench --T 0,4
refused "--gate-repeats: '10'" bench --gate-repeats 10
refused "--min-effect: '0'" bench --min-effect 0
refused "more than 16 backends" bench --backend "$(printf 'ref,%.0s' $(seq 1 17))"
refused "--shard: '2/2'" run --shard 2/2
refused "--timeout: '0'" run --timeout 0
refused "--seed: '-1'" run --seed -1
refused "--mem-limit: 'lots'" run --mem-limit lots
refused "--op nope" verify a.h5 --op nope
refused "--repeat: '0'" run --repeat 0 --bitwise
refused "--invariance-ulps bounds" run --invariance-ulps 2
echo "ok [options]: $(wc -l <"$W/opts") command options, each in its --help and refused in one line where it does not belong"
