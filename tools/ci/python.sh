#!/usr/bin/env bash
# The Python package (python/): `pip install ./python` into a fresh venv that
# has numpy, h5py and pytest, then its tests. Tests that need torch or an
# engine skip here with the reason (tools/ci/engines.sh runs them); the verify
# tests use build/mtpcheck when it is built.
set -euo pipefail
cd "$(dirname "$0")/../.."
V=/opt/mtpcheck-venvs/pytest
if [ ! -x "$V/bin/python" ] || ! "$V/bin/python" -c 'import numpy, h5py, pytest' 2>/dev/null; then
	rm -rf "$V"
	/usr/bin/python3 -m venv "$V"
	"$V/bin/python" -m pip install -q --upgrade pip
	if ! "$V/bin/python" -m pip install -q numpy h5py pytest; then
		echo "SKIPPED python package tests: pip could not install numpy h5py pytest"; exit 0
	fi
fi
# a fresh install of the package each time (what a user does), tests against it
"$V/bin/python" -m pip install -q --force-reinstall --no-deps ./python
[ -x build/mtpcheck ] && export MTPCHECK_BIN="${MTPCHECK_BIN:-$PWD/build/mtpcheck}"
"$V/bin/python" -m pytest -q -rs -p no:cacheprovider python/tests
