"""vLLM general plugin (entry point group `vllm.general_plugins`): vLLM calls
register() in every process it starts, engine workers included.  It does
nothing unless MTPCHECK_CAPTURE is set; then it installs the capture, which
attaches to the first MTP model that runs.  A `%p` in the path becomes the
process id, so that several workers do not write the same file."""

from __future__ import annotations

import os


def register() -> None:
    if not os.environ.get("MTPCHECK_CAPTURE"):
        return
    from . import install_from_env

    cap = install_from_env("vllm")
    if cap is not None:
        print("mtpcheck.capture: recording into %s: %s" % (cap.path, cap.bounds.describe()))
