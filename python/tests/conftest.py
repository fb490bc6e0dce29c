import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # mirrors.py, vllm_tiny.py

from mtpcheck import verify

ENGINE_TESTS = os.environ.get("MTPCHECK_ENGINE_TESTS") == "1"
SGLANG_TESTS = os.environ.get("MTPCHECK_SGLANG_TESTS") == "1"


def need(module, required=ENGINE_TESTS):
    """Import an engine-side module; under tools/ci/engines.sh
    (MTPCHECK_ENGINE_TESTS=1 for the vLLM venv's tests; `required =
    SGLANG_TESTS` in the SGLang venv's) its absence is a failure, elsewhere a
    skip."""
    try:
        return __import__(module)
    except Exception as e:  # noqa: BLE001 -- torch / vllm raise more than ImportError when half there
        if required:
            pytest.fail("%s not importable in the engine venv: %s" % (module, e), pytrace=False)
        pytest.skip("%s not installed (tools/ci/engines.sh runs these): %s" % (module, e),
                    allow_module_level=True)


def judge(path):
    """`mtpcheck verify` on a dump. Outside CI, a binary that cannot read what
    the dump uses yet (exit 2 naming the captured block, an unknown name or
    something not supported) skips the test with the harness's own words;
    under tools/ci/engines.sh (MTPCHECK_ENGINE_TESTS=1) that is a failure:
    the dump the capture wrote must be one the harness judges."""
    binary = verify.find_binary()
    if binary is None:
        if ENGINE_TESTS:
            pytest.fail("no mtpcheck binary (MTPCHECK_BIN)")
        pytest.skip("no mtpcheck binary (set MTPCHECK_BIN)")
    v = verify.run(path, binary)
    if unsupported(v):
        lines = v.text.strip().splitlines()
        first = lines[0] if lines else ""
        if ENGINE_TESTS:
            pytest.fail("mtpcheck cannot judge the dump (exit 2): " + first, pytrace=False)
        pytest.skip("this mtpcheck cannot judge the dump yet: " + first)
    return v


def unsupported(v):
    """An exit 2 that says the binary cannot read the dump (rather than a bad file)."""
    return v.returncode == 2 and ("not supported" in v.text or "captured" in v.text
                                  or "unknown" in v.text)
