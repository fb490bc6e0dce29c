#!/usr/bin/env bash
# The main job: install, build, run the default conformance suite on the CPU
# backends, write the results to out/. Exit code is mtpcheck's (ARCHITECTURE.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/ci/deps.sh
cmake -S . -B build -DMTP_BUILD_TESTS=OFF -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
mkdir -p out
backends=ref
if ./build/mtpcheck list backends | grep -q '^cpu .*built in'; then backends=ref,cpu; fi
exec ./build/mtpcheck run --backend "$backends" --json out/results.json \
	--junit out/results.xml --html out/report.html "$@"
