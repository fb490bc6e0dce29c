import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # mirrors.py, vllm_tiny.py

from mtpcheck import verify  # noqa: E402

ENGINE_TESTS = os.environ.get("MTPCHECK_ENGINE_TESTS") == "1"


def need(module):
    """Import an engine-side module; under tools/ci/engines.sh
    (MTPCHECK_ENGINE_TESTS=1) its absence is a failure, elsewhere a skip."""
    try:
        return __import__(module)
    except Exception as e:  # torch / vllm raise more than ImportError when half there
        if ENGINE_TESTS:
            pytest.fail("%s not importable in the engine venv: %s" % (module, e), pytrace=False)
        pytest.skip("%s not installed (tools/ci/engines.sh runs these): %s" % (module, e),
                    allow_module_level=True)


def judge(path):
    """`mtpcheck verify` on a dump. Skipped, with the harness's own words,
    while the binary cannot read what the dump uses (format version 2, the
    captured block): the assertions after it become real once it can."""
    binary = verify.find_binary()
    if binary is None:
        if ENGINE_TESTS:
            pytest.fail("no mtpcheck binary (MTPCHECK_BIN)")
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    v = verify.run(path, binary)
    unsupported = v.returncode == 2 and ("not supported" in v.text or "captured" in v.text
                                         or "unknown" in v.text)
    if unsupported:
        lines = v.text.strip().splitlines()
        pytest.skip("this mtpcheck cannot judge the dump yet: " + (lines[0] if lines else ""))
    return v
