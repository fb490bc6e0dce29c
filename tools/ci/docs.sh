#!/usr/bin/env bash
# The repository explains itself (issue 14): checks that
#  1. nothing in the tree refers to files outside it (the briefs the project
#     grew from, the spec, fixture-format and design notes kept beside the
#     repository, and the folder holding them), HDF5 fixtures included
#     (their description attributes come from tools/gen/cases.py);
#  2. every op that `mtpcheck list ops` prints is specified in docs/SPEC.md
#     (a row of the §11 table, in backquotes);
#  3. the harness/src table of docs/ARCHITECTURE.md lists exactly the
#     subsystem folders of harness/src and their files, and each folder's
#     "may depend on" as its public header's "May depend on:" line says;
#  4. the layering holds (tools/ci/layers.py: no circle, every dependency
#     declared; with the binary's build folder, on the object files too);
#  5. the docs name only what exists (tools/ci/docrefs.py): every backquoted
#     path under the repository's folders, every mtp_/MTP_ symbol, and the
#     backend API and results schema versions they state.
#  6. docs/BENCHMARKS.md is what `mtpcheck report docs/bench/*.json
#     --markdown` makes of the bench files and their records (regenerated
#     into a temporary file, compared byte for byte; docs/CI.md, "The
#     benchmarks page").
#  7. every profile of tools/bench/device.sh is data it can run: each line a
#     comment, `budget SECONDS`, `torch` or `NAME CAP COMMAND` with CAP whole
#     seconds and COMMAND valid bash (bash -n), no NAME twice.
#  8. every option of an `mtpcheck COMMAND ...` line in the docs is one that
#     COMMAND takes (tools/ci/options.py, against `mtpcheck list options`,
#     which prints the one option table, harness/src/cli/options.c).
# Usage: tools/ci/docs.sh [MTPCHECK_BINARY]     (default: build/mtpcheck)
#        tools/ci/docs.sh --fix                 rewrites the references of 1.
#          in text files into docs/SPEC.md, docs/FORMAT.md and
#          docs/ARCHITECTURE.md; fixtures must then be regenerated:
#          /usr/bin/python3 tools/gen/mtpgen.py --out fixtures/
set -uo pipefail
cd "$(dirname "$0")/../.."
# The names are written as bracket expressions so that this file itself does
# not match a plain grep for them.
pattern='\(^\|[^a-zA-Z0-9_-]\)share[d]/\|MTP-SPE[C]\|FIXTURE[S]\.md\|FIXTURE[S] v2\|DESIG[N]\.md'

if [ "${1:-}" = "--fix" ]; then
	files=$(git grep -lI "$pattern" -- . || true)
	[ -z "$files" ] && { echo "docs.sh --fix: nothing to rewrite"; exit 0; }
	# shellcheck disable=SC2086
	sed -i -e 's#\.\./share[d]/MTP-SPE[C]\.md#docs/SPEC.md#g' \
		-e 's#\.\./share[d]/FIXTURE[S]\.md#docs/FORMAT.md#g' \
		-e 's#\.\./share[d]/DESIG[N]\.md#docs/ARCHITECTURE.md#g' \
		-e 's#MTP-SPE[C]\.md#SPEC.md#g' -e 's#MTP-SPE[C]#SPEC.md#g' \
		-e 's#FIXTURE[S] v2#FORMAT.md v2#g' \
		-e 's#FIXTURE[S]\.md#FORMAT.md#g' \
		-e 's#DESIG[N]\.md#ARCHITECTURE.md#g' $files
	echo "docs.sh --fix: rewrote $(echo "$files" | wc -l) files; run clang-format -i on the C ones and regenerate fixtures"
	exit 0
fi

bin=${1:-build/mtpcheck}
fail=0

# 1. references to files outside the repository, binary files included
refs=$(git grep -n "$pattern" -- . 2>/dev/null || true)
if [ -n "$refs" ]; then
	echo "$refs" | head -40
	echo "docs: $(echo "$refs" | wc -l) references to files outside the repository (tools/ci/docs.sh --fix)"
	fail=1
fi

# 2. every op of `mtpcheck list ops` in the §11 table of docs/SPEC.md
if [ -x "$bin" ]; then
	ops=$("$bin" list ops | awk '{print $1}')
	[ -n "$ops" ] || { echo "docs: $bin list ops printed nothing"; fail=1; }
	table=$(awk '/^## 11\./,/^## 12\./' docs/SPEC.md)
	for op in $ops; do
		if ! grep -q "^| \`$op\` |" <<<"$table"; then
			echo "docs: op $op (mtpcheck list ops) has no row in docs/SPEC.md §11"
			fail=1
		fi
	done
else
	echo "docs: SKIPPED the op check: no binary at $bin"
fi

# 3. docs/ARCHITECTURE.md's harness/src table against the tree: a row per
# subsystem folder, | `folder/` | what | may depend on | files |
table=$(awk '/^`harness\/src\/` by subsystem/,/^The `\*_none.c`/' docs/ARCHITECTURE.md | grep '^| `')
listed=$(echo "$table" | while IFS='|' read -r _ dir _ _ files _; do
	d=$(echo "$dir" | tr -d '` /')
	for f in $(echo "$files" | grep -o '`[^`]*`' | tr -d '`'); do echo "$d/$f"; done
done | sort)
present=$(cd harness/src && find . -type f | sed 's#^\./##' | sort)
missing=$(comm -13 <(echo "$listed") <(echo "$present"))
gone=$(comm -23 <(echo "$listed") <(echo "$present"))
[ -n "$missing" ] && { echo "docs: in harness/src, not in docs/ARCHITECTURE.md's table:" $missing; fail=1; }
[ -n "$gone" ] && { echo "docs: in docs/ARCHITECTURE.md's table, not in harness/src:" $gone; fail=1; }
while IFS='|' read -r _ dir _ deps _; do
	d=$(echo "$dir" | tr -d '` /')
	h=harness/src/$d/$d.h
	[ -f "$h" ] || continue
	said=$(echo "$deps" | tr -d '`,' | xargs -n1 2>/dev/null | sort | xargs)
	real=$(sed -n 's/^ \* May depend on: *//p' "$h" | tr -d ',.' | xargs -n1 | grep -vx nothing | sort | xargs)
	[ "$said" = "${real:--}" ] ||
		{ echo "docs: ARCHITECTURE.md says $d may depend on '$said', $h says '${real:--}'"; fail=1; }
done <<<"$table"

# 4. the layering (tools/ci/layers.py), on the objects of the binary's build
layers_args=()
[ -x "$bin" ] && layers_args=(--objects "$(dirname "$bin")")
if ! /usr/bin/python3 tools/ci/layers.py "${layers_args[@]}" >/tmp/mtp-layers.log; then
	grep '^layers:' /tmp/mtp-layers.log
	fail=1
fi

# 5. every path, symbol and version the docs name exists as named
/usr/bin/python3 tools/ci/docrefs.py || fail=1

# 6. the benchmarks page as its bench files make it
if [ -x "$bin" ]; then
	page=$(mktemp /tmp/mtp-benchmarks.XXXXXX.md)
	if ! why=$("$bin" report docs/bench/*.json --markdown "$page" 2>&1 >/dev/null); then
		if [[ $why == *"built without libcjson"* ]]; then
			echo "docs: SKIPPED the benchmarks page check: $bin was built without libcjson"
		else
			echo "docs: $bin report docs/bench/*.json --markdown failed: $why"
			fail=1
		fi
	elif ! diff -q docs/BENCHMARKS.md "$page" >/dev/null; then
		diff -u docs/BENCHMARKS.md "$page" | head -20
		echo "docs: docs/BENCHMARKS.md is not what docs/bench/*.json make of it: mtpcheck report docs/bench/*.json --markdown docs/BENCHMARKS.md"
		fail=1
	fi
	rm -f "$page"
else
	echo "docs: SKIPPED the benchmarks page check: no binary at $bin"
fi

# 7. the device profiles parse as device.sh reads them
for prof in tools/bench/profiles/*.steps; do
	seen=" "
	while read -r step cap cmd; do
		case $step in '' | '#'* | torch) continue ;; esac
		where="$prof: step '$step'"
		if [ "$step" = budget ]; then
			[[ $cap =~ ^[0-9]+$ ]] || { echo "docs: $prof: budget '$cap' is not whole seconds"; fail=1; }
			continue
		fi
		[[ $cap =~ ^[0-9]+$ ]] || { echo "docs: $where: cap '$cap' is not whole seconds"; fail=1; }
		[ -n "$cmd" ] || { echo "docs: $where: no command"; fail=1; }
		bash -n -c "$cmd" 2>/dev/null || { echo "docs: $where: not valid bash"; fail=1; }
		[[ $seen == *" $step "* ]] && { echo "docs: $where: named twice"; fail=1; }
		seen="$seen$step "
	done <"$prof"
done

# 8. every option the docs' command lines give is in the option table
if [ -x "$bin" ]; then
	/usr/bin/python3 tools/ci/options.py "$bin" >/tmp/mtp-options.log || { grep -v ' 0 unknown' /tmp/mtp-options.log; fail=1; }
else
	echo "docs: SKIPPED the option check: no binary at $bin"
fi

if [ $fail -ne 0 ]; then
	echo "docs: FAILED"
	exit 1
fi
echo "docs: no reference leaves the repository; every op is specified; ARCHITECTURE.md matches harness/src; every path, symbol and version the docs name exists; docs/BENCHMARKS.md matches docs/bench; the device profiles parse; every option of the docs' command lines is one its command takes; $(tail -1 /tmp/mtp-layers.log)"
