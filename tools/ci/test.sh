#!/usr/bin/env bash
# The tests: install, build with the unit tests, run them with CTest (the
# Criterion unit tests, the suite per backend, the mutant self-test), plain
# and under AddressSanitizer + UndefinedBehaviorSanitizer; check that the
# golden fixtures regenerate bit for bit and the bug dumps are named.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/ci/deps.sh
jobs=$(nproc)
steps=0
step() { # a CI step's title, with the seconds since the start; every step exits on failure
	echo "== [${SECONDS} s] $*"
	steps=$((steps + 1))
}
# the interpreter the scripts use (deps.sh gives it numpy and python3-dev);
# CMake alone may find another one (pyenv's, without numpy) first
py=(-DPython3_EXECUTABLE=/usr/bin/python3)

# Tests that CI must run: a SKIPPED one here means a missing install.
must_run() { # LOG TEST...
	local log=$1 t
	shift
	for t in "$@"; do
		if grep -E "Test +#[0-9]+: $t " "$log" | grep -q 'Skipped'; then
			echo "$t was skipped in CI (see its output above): an install step is missing"; exit 1
		fi
	done
}

step "formatting (STYLE.md: .clang-format, clang-format 14)"
clang-format --dry-run --Werror $(git ls-files '*.c' '*.h')

step "python lint (STYLE.md): ruff $(sed -n 's/^RUFF_VERSION=//p' tools/ci/lint.sh) clean on python/ and tools/, type hints on python/mtpcheck's public functions (tools/ci/lint.sh)"
bash tools/ci/lint.sh

step "sizes (STYLE.md): a source file under 600 lines, a function under 100 (tools/ci/sizes.py)"
/usr/bin/python3 tools/ci/sizes.py

step "build and unit tests"
cmake -S . -B build -DMTP_BUILD_TESTS=ON "${py[@]}" >/dev/null
if ! cmake --build build -j"$jobs" >/tmp/mtp-build.log 2>&1; then
	tail -40 /tmp/mtp-build.log; echo "build failed"; exit 1
fi
if grep -E '(warning|error):' /tmp/mtp-build.log; then
	echo "build is not -Wall -Wextra clean"; exit 1
fi
ctest --test-dir build -j"$jobs" --output-on-failure | tee /tmp/mtp-ctest.log
must_run /tmp/mtp-ctest.log suite.python.numpy python.bridge suite.opencl empty.opencl empty.python.numpy

step "installed: cmake --install into a prefix, examples/backend built against it, the quick suite from the installed binary, the .deb (tools/ci/install.sh)"
bash tools/ci/install.sh build

step "a build without Python's development files: it builds and says why the python backend is absent"
cmake -S . -B build-nopy -DMTP_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON \
	-DMTP_WITH_CUDA=OFF -DMTP_WITH_HIP=OFF -DMTP_WITH_OPENCL=OFF -DMTP_WITH_LEVEL_ZERO=OFF >/dev/null
cmake --build build-nopy -j"$jobs" --target mtpcheck >/dev/null
./build-nopy/mtpcheck list backends | grep -E '^python +this build has no python backend \(configured without Python 3' ||
	{ ./build-nopy/mtpcheck list backends; echo "python backend not reported absent"; exit 1; }

step "unit tests under ASan + UBSan"
cmake -S . -B build-san -DMTP_BUILD_TESTS=ON -DMTP_SANITIZE=ON -DMTP_WITH_CUDA=OFF "${py[@]}" >/dev/null
cmake --build build-san -j"$jobs" >/dev/null
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-san -j"$jobs" --output-on-failure | tee /tmp/mtp-ctest-san.log
must_run /tmp/mtp-ctest-san.log suite.python.numpy python.bridge suite.opencl empty.opencl empty.python.numpy

if [ -f tools/gen/mtpgen.py ]; then
	step "golden generator: its tests (the FP8 conversions' among them), and the fixtures regenerate bit for bit"
	/usr/bin/python3 tools/gen/test_gen.py
	/usr/bin/python3 tools/gen/mtpgen.py --check fixtures/
fi

step "the bug dumps regenerate and are named (docs/SPEC.md §8)"
/usr/bin/python3 tools/gen/bug_dumps.py /tmp/mtp-bugs.h5
./build/mtpcheck verify /tmp/mtp-bugs.h5 >/tmp/mtp-bugs.log && { echo "bug dumps passed?"; exit 1; } || true
for d in PRE_NORM_RECYCLE MISSING_HC_POST HC_POST_TWICE HC_HEAD_OWNER; do
	grep -q "diagnosis: $d" /tmp/mtp-bugs.log || { cat /tmp/mtp-bugs.log; echo "bug dump $d not named"; exit 1; }
done

step "the reference against every bundled golden (ASan build)"
./build-san/mtpcheck run --backend ref --fixtures fixtures/ >/tmp/mtp-ref.log || { tail -40 /tmp/mtp-ref.log; exit 1; }
tail -3 /tmp/mtp-ref.log

step "fuzzing: the fixture reader, the case-file parser and the CLI, 30 s each (docs/CI.md)"
bash tools/ci/fuzz.sh 30

step "the Python package (python/): pip install, its tests (docs/DUMPS.md)"
bash tools/ci/python.sh
step "the capture hooks on real vLLM 0.33 code, judged by mtpcheck verify (docs/FINDINGS.md)"
bash tools/ci/engines.sh
step "the weight audit against vLLM 0.33's real loaders (docs/WEIGHTS.md)"
bash tools/ci/weights.sh
step "Intel's CPU OpenCL runtime (PyPI): opencl, opencl:spirv, level_zero over a stand-in driver"
bash tools/ci/intel.sh build # Intel's CPU OpenCL runtime (PyPI): opencl, opencl:spirv, level_zero

step "python backend: the torch adapter on the CPU through the embedded interpreter (SKIPPED without a torch venv)"
bash tools/ci/torch_adapter.sh

step "captured-block steps and chains, small and real size (tools/ci/captured.sh)"
bash tools/ci/captured.sh

step "the docs: no reference outside the repository, every op specified, ARCHITECTURE.md matches the tree"
bash tools/ci/docs.sh build/mtpcheck || exit 1

step "the reports: JSON schema, JUnit (junitparser), pages in headless Chromium (docs/RESULTS.md)"
bash tools/ci/reports.sh

step "the field bug dumps (docs/SPEC.md §12.4) are named; the rounding-bias test stays silent"
bash tools/ci/field_dumps.sh
step "the pip package: the wheel built, repaired, installed in fresh venvs; suite, API, example pytest (tools/ci/wheel.sh)"; bash tools/ci/wheel.sh

# every step above exits on failure, so reaching here means all of them passed
echo "ci steps: $steps passed, 0 failed, ${SECONDS} s"
