"""An adapter whose framework is not installed: the backend is SKIPPED, and
the reason names the module, the embedded interpreter and how to pick
another (the newcomer's trap: a pyenv python without NumPy built in)."""
import mtpcheck_no_such_framework  # noqa: F401


def adapter(mode=None):
    raise AssertionError("not reached")
