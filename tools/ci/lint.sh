#!/usr/bin/env bash
# Python lint (STYLE.md, issue 29): `ruff check python tools` clean under the
# config in pyproject.toml ([tool.ruff]), with ruff pinned here so that a new
# ruff's new default rules cannot fail CI overnight; and type hints on every
# public function of python/mtpcheck (tools/ci/py_hints.py). The pinned ruff
# lives in a cached venv; a finding or a missing hint fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUFF_VERSION=0.17.6
V=/opt/mtpcheck-venvs/ruff-$RUFF_VERSION
if [ ! -x "$V/bin/ruff" ] || [ "$("$V/bin/ruff" --version)" != "ruff $RUFF_VERSION" ]; then
	rm -rf "$V"
	/usr/bin/python3 -m venv "$V"
	if ! "$V/bin/python" -m pip install -q "ruff==$RUFF_VERSION"; then
		rm -rf "$V"; echo "lint: pip could not install ruff==$RUFF_VERSION"; exit 1
	fi
fi
"$V/bin/ruff" check --no-cache python tools
/usr/bin/python3 tools/ci/py_hints.py python/mtpcheck
