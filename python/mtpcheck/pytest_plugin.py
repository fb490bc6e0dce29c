"""pytest plugin of the mtpcheck package (entry point `pytest11`, so pytest loads it
in every session of an environment where the package is installed): the
`mtpcheck_capture` fixture, for an engine's own test suite (docs/PYTHON.md).

    def test_mtp_layer(mtpcheck_capture):
        model = build_my_mtp_model()                      # inside the test
        with mtpcheck_capture(model, engine="vllm", steps=3):
            run_k_draft_steps(model, 3)                   # eager mode
        # leaving the block wrote the dump and ran `mtpcheck verify` on it: a
        # failing case fails the test with its diagnosis and its repro line

Importing this module imports nothing but pytest: torch and the engine are imported
by the capture hooks when a test uses the fixture.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any

import pytest


class _Captured:
    """One `with mtpcheck_capture(...)` block: installs the hooks on entry; on a
    clean exit writes the dump and asserts that `mtpcheck verify` passes it."""

    def __init__(self, owner: MtpcheckCapture, model: Any, engine: str, path: str,
                 install: dict[str, Any], options: dict[str, Any]):
        self.owner, self.model, self.engine, self.path = owner, model, engine, path
        self.install, self.options = install, options
        self.capture: Any = None

    def __enter__(self) -> Any:
        from mtpcheck import capture

        self.capture = capture.install(engine=self.engine, path=self.path, model=self.model,
                                       **self.install)
        return self.capture

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if exc_type is not None:  # the test's own error goes first
            self.capture.remove()
            return False
        self.finish()
        return False

    def finish(self) -> None:
        """Writes the dump, removes the hooks, verifies the dump."""
        try:
            cases = self.capture.write()
        finally:
            self.capture.remove()
        if not cases:
            pytest.fail(f"mtpcheck_capture: no MTP step of the {self.engine} model ran inside the "
                        "block (nothing captured: eager mode? the model's MTP layers run?)",
                        pytrace=False)
        self.owner.check(self.path, **self.options)


class MtpcheckCapture:
    """The `mtpcheck_capture` fixture's value: call it with the model to get a
    context manager; `check(path)` verifies a dump written elsewhere; `results` is
    the last verdict (mtpcheck.results.Results)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.results: Any = None
        self.count = 0

    def __call__(self, model: Any = None, *, engine: str = "vllm", steps: int = 3,
                 path: str | None = None, verify_options: dict[str, Any] | None = None,
                 **install: Any) -> _Captured:
        """`model`: the engine's MTP model (None: the first that runs); `steps`,
        and `max_tokens`, `layers`, `chains`, `max_bytes`: the capture's bounds
        (mtpcheck.capture.install); `verify_options`: options of mtpcheck.verify."""
        self.count += 1
        path = path or os.path.join(self.directory, f"mtp_capture{self.count:d}.h5")
        return _Captured(self, model, engine, path, dict(install, steps=steps),
                         dict(verify_options or {}))

    def check(self, path: str, **options: Any) -> Any:
        """Asserts that `mtpcheck verify PATH` passes; fails the test with each
        failing case's verdict, diagnosis and repro line otherwise."""
        from mtpcheck.api import MtpcheckError, verify

        try:
            self.results = verify(path, **options)
        except MtpcheckError as e:
            pytest.fail(f"mtpcheck verify {path} could not judge the dump: {e}",
                        pytrace=False)
        if not self.results.passed:
            bad = [r for r in self.results.results if not r.passed]
            pytest.fail("\n".join([str(self.results).splitlines()[0]] +
                                  [r.describe() for r in bad] + [f"dump: {path}"]),
                        pytrace=False)
        return self.results


@pytest.fixture
def mtpcheck_capture(tmp_path: Any) -> MtpcheckCapture:
    """Captures the MTP steps of a model built in the test and asserts that
    `mtpcheck verify` passes them (see this module's docstring)."""
    return MtpcheckCapture(str(tmp_path))
