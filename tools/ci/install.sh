#!/usr/bin/env bash
# mtpcheck as a vendor gets it (docs/CI.md, "Installed"): `cmake --install`
# into a temporary prefix; the example out-of-tree backend (examples/backend)
# built against that prefix alone, through find_package(mtpcheck) and through
# pkg-config, and a C++ module (examples/backend/cxx_entry.cpp); the
# installed binary run from a folder outside the source tree on its
# installed default suite (rmsnorm PASSED, every other op UNIMPLEMENTED, exit
# 0; the wrong variant FAILED, exit 1); the installed modules loaded from
# lib/mtpcheck/ (the python one with the installed adapters); the flow of
# docs/nightly.gitlab-ci.yml (shards merged by report); then `cpack -G DEB`,
# its file list and Depends, and the package unpacked elsewhere running its
# own suite.
# Usage: tools/ci/install.sh [BUILD_DIR]   (default: build, built if missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
build=${1:-build}
tmp=$(mktemp -d /tmp/mtp-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "install: $*"
	exit 1
}

if [ ! -x "$build/mtpcheck" ]; then
	cmake -S . -B "$build" -DMTP_BUILD_TESTS=OFF -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
	cmake --build "$build" -j"$(nproc)" >/dev/null
fi

# 1. the layout
pfx=$tmp/prefix
cmake --install "$build" --prefix "$pfx" >/dev/null
for f in bin/mtpcheck lib/libmtpcheck_backend.a include/mtpcheck/mtp/backend.h \
	lib/cmake/mtpcheck/mtpcheck-config.cmake lib/cmake/mtpcheck/mtpcheck-config-version.cmake \
	lib/pkgconfig/mtpcheck.pc share/mtpcheck/cases/quick.case share/mtpcheck/fixtures/norms.h5 \
	share/mtpcheck/fixtures/weights/deepseek_v3.keys.txt; do
	[ -e "$pfx/$f" ] || fail "cmake --install put no $f"
done
for m in "$build"/mtp_backend_*.so; do
	[ -e "$m" ] || continue
	[ -e "$pfx/lib/mtpcheck/$(basename "$m")" ] || fail "module $(basename "$m") not installed in lib/mtpcheck/"
done

# 2. the example backend, against the installed package only
cmake -S examples/backend -B "$tmp/example" -DCMAKE_PREFIX_PATH="$pfx" >/dev/null
if ! cmake --build "$tmp/example" >"$tmp/example.log" 2>&1 || grep -E '(warning|error):' "$tmp/example.log"; then
	cat "$tmp/example.log"
	fail "examples/backend did not build cleanly against the installed package"
fi
PKG_CONFIG_PATH=$pfx/lib/pkgconfig cc -std=c11 -Wall -Wextra -Werror -shared -fPIC \
	-o "$tmp/pc_example.so" examples/backend/example.c \
	$(PKG_CONFIG_PATH=$pfx/lib/pkgconfig pkg-config --cflags --libs mtpcheck)
if command -v g++ >/dev/null; then # the headers link as C from C++
	PKG_CONFIG_PATH=$pfx/lib/pkgconfig g++ -std=c++17 -Wall -Wextra -Werror -shared -fPIC \
		-Wl,--no-undefined -o "$tmp/cxx_entry.so" examples/backend/cxx_entry.cpp \
		$(PKG_CONFIG_PATH=$pfx/lib/pkgconfig pkg-config --cflags --libs mtpcheck) ||
		fail "a C++ module does not link against the installed package"
fi

# 3. the installed binary, outside the source tree, on its own default suite
mkdir "$tmp/run"
cd "$tmp/run"
mtp=$pfx/bin/mtpcheck
rc=0
"$mtp" run --backend example --backend-lib "$tmp/example/mtp_backend_example.so" \
	--json ok.json >ok.log || rc=$?
[ $rc -eq 0 ] || { tail -20 ok.log; fail "the example backend's suite exited $rc, not 0"; }
/usr/bin/python3 - ok.json "$pfx/share/mtpcheck/" <<'PY' || { tail -20 ok.log; exit 1; }
import collections, json, sys
res = json.load(open(sys.argv[1]))["results"]
by = collections.Counter((r["op"] == "rmsnorm", r["verdict"]) for r in res)
want = {(True, "PASSED"), (False, "UNIMPLEMENTED")}
if set(by) != want:
    sys.exit(f"install: example backend: want rmsnorm PASSED and the rest UNIMPLEMENTED, got {dict(by)}")
# the installed suite and fixtures, named as in the source tree
if not all(sys.argv[2] in r["repro"] for r in res):
    sys.exit("install: a case did not come from the installed share/mtpcheck/")
names = {r["file"] for r in res if not r["file"].startswith(("generated", "cases"))}
if not names or not all(n.startswith("fixtures/") for n in names):
    sys.exit(f"install: fixture names not relative to share/mtpcheck: {sorted(names)[:3]}")
print(f"install: example backend: {by[(True, 'PASSED')]} rmsnorm PASSED, "
      f"{by[(False, 'UNIMPLEMENTED')]} UNIMPLEMENTED, from the installed suite")
PY
rc=0
"$mtp" run --backend example --backend-lib "$tmp/example/mtp_backend_example_wrong.so" \
	--op rmsnorm >wrong.log || rc=$?
[ $rc -eq 1 ] && grep -Eq '^mtpcheck run: ([0-9]+) results: \1 FAILED$' wrong.log ||
	{ tail -5 wrong.log; fail "the wrong example exited $rc, not 1 with every rmsnorm case FAILED"; }
# a kernel that is wrong, not merely rounded, must not be named ROUNDING_BIAS
! grep -q 'ROUNDING_BIAS' wrong.log ||
	{ grep -m3 ROUNDING_BIAS wrong.log; fail "the wrong example's failures were named ROUNDING_BIAS"; }
"$mtp" run --backend example --backend-lib "$tmp/pc_example.so" --op rmsnorm >pc.log ||
	{ tail -5 pc.log; fail "the example built with pkg-config did not pass"; }
"$mtp" audit-weights --selftest >aw.log || { tail -5 aw.log; fail "the installed audit-weights --selftest failed"; }
if [ -e "$tmp/cxx_entry.so" ]; then
	rc=0
	"$mtp" run --backend cxx --backend-lib "$tmp/cxx_entry.so" --op rmsnorm -q >cxx.log 2>&1 || rc=$?
	[ $rc -eq 125 ] && grep -Eq '^mtpcheck run: ([0-9]+) results: \1 UNIMPLEMENTED$' cxx.log ||
		{ tail -5 cxx.log; fail "the C++ module: exit $rc, not 125 with every case UNIMPLEMENTED"; }
fi
# every installed module loads from lib/mtpcheck/ (no device: exit 125, but loaded)
for m in "$pfx"/lib/mtpcheck/mtp_backend_*.so; do
	[ -e "$m" ] || continue
	name=$(basename "$m" .so)
	name=${name#mtp_backend_}
	[ "$name" = python ] && continue # below
	rc=0
	"$mtp" run --backend "$name" --op rmsnorm --fixtures "$pfx/share/mtpcheck/fixtures/norms.h5" >mod.log 2>&1 || rc=$?
	if grep -q 'cannot load' mod.log || { [ $rc -ne 0 ] && [ $rc -ne 125 ]; }; then
		tail -5 mod.log
		fail "installed module $name: exit $rc"
	fi
	echo "install: module $name loaded from lib/mtpcheck/ (exit $rc)"
done
# the python module reads the installed copy of the adapters: an adapter
# that only that copy has (a renamed numpy adapter) runs and passes
py=$pfx/share/mtpcheck/python/mtpcheck/adapters
if [ -e "$pfx/lib/mtpcheck/mtp_backend_python.so" ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	cp "$py/numpy.py" "$py/install_probe.py"
	"$mtp" run --backend python:mtpcheck.adapters.install_probe --op rmsnorm >py.log 2>&1 ||
		{ tail -5 py.log; fail "the installed python module did not run the installed adapters"; }
	rm "$py/install_probe.py"
	echo "install: module python read its adapters from share/mtpcheck/python/"
fi

# the flow of docs/nightly.gitlab-ci.yml: shards of one run id, merged by
# report, are the whole run in one column
for i in 0 1; do
	MTP_RUN_ID=install-ci "$mtp" run --backend ref --op rmsnorm,hc_post --shard $i/2 --json shard$i.json >/dev/null
done
"$mtp" run --backend ref --op rmsnorm,hc_post --json whole.json >/dev/null
"$mtp" report shard0.json shard1.json --json merged.json >/dev/null
/usr/bin/python3 - merged.json whole.json "$src/docs/nightly.gitlab-ci.yml" "$mtp" <<'PY'
import json, re, subprocess, sys
merged, whole = (json.load(open(f))["results"] for f in sys.argv[1:3])
key = lambda rs: sorted((r["file"], r["case"], r["verdict"]) for r in rs)
if key(merged) != key(whole) or len({r["backend"] for r in merged}) != 1:
    sys.exit("install: two shards merged by mtpcheck report are not the whole run in one column")
# every option the pipeline gives mtpcheck run and report exists
text = open(sys.argv[3]).read()
for cmd in ("run", "report"):
    lines = re.findall(rf"mtpcheck {cmd} .*(?:\n +--.*)*", text)
    used = set(re.findall(r"--[a-z-]+", " ".join(lines)))
    helptext = subprocess.run([sys.argv[4], cmd, "--help"], capture_output=True, text=True).stdout
    missing = sorted(o for o in used if not re.search(re.escape(o) + r"(?![a-z-])", helptext))
    if not used or missing:
        sys.exit(f"install: docs/nightly.gitlab-ci.yml: mtpcheck {cmd}: {missing or 'no command line'}")
print("install: shards merge into the whole run; docs/nightly.gitlab-ci.yml's options exist")
PY
cd "$src"

# 4. the .deb: its files, its Depends, and the package unpacked anywhere
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/deb" >"$tmp/cpack.log" 2>&1 ||
	{ cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$tmp"/deb/mtpcheck_*.deb)
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/deb.files"
for f in ./usr/bin/mtpcheck ./usr/lib/libmtpcheck_backend.a ./usr/include/mtpcheck/mtp/backend.h \
	./usr/lib/cmake/mtpcheck/mtpcheck-config.cmake ./usr/lib/pkgconfig/mtpcheck.pc \
	./usr/share/mtpcheck/cases/quick.case ./usr/share/mtpcheck/fixtures/norms.h5; do
	grep -qx "$f" "$tmp/deb.files" || fail "$(basename "$deb") has no $f"
done
if grep -E '/build|harness/src|\.o$|/work/' "$tmp/deb.files"; then
	fail "the .deb holds files from the build tree"
fi
depends=$(dpkg-deb -f "$deb" Depends)
grep -q 'libhdf5' <<<"$depends" || fail "the .deb's Depends lack HDF5: $depends"
if grep -Eq 'libOpenCL|ocl-icd|libze|libpython|cuda' <<<"$depends"; then
	fail "a module's runtime is a hard dependency of the .deb: $depends"
fi
dpkg-deb -x "$deb" "$tmp/root"
cd "$tmp"
"$tmp/root/usr/bin/mtpcheck" run --backend ref --op rmsnorm,hc_post --json deb.json >deb.log ||
	{ tail -5 deb.log; fail "the unpacked .deb's binary did not pass its own suite"; }
grep -q "$tmp/root/usr/share/mtpcheck/cases/quick.case" deb.json || fail "the unpacked .deb did not read its own cases"
echo "install: $(basename "$deb"): $(wc -l <"$tmp/deb.files") entries; Depends: $depends"
echo "install: passed"
