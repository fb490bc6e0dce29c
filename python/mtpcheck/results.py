"""The JSON results of `mtpcheck run|verify --json` as dataclasses.

The fields and their names are those of docs/RESULTS.md and docs/results.schema.json
(format `mtpcheck-results`, schema 2.x); a field this module does not name (a later
minor version adds some; `conventions_matched`, the rounding-bias figures) is kept
in the object's `extra` dict, so nothing the binary wrote is lost.  Numbers written
as "inf", "-inf" or "nan" are floats here.  `Results.from_dict(json.load(f))` reads
a file; `str(results)` is the counts and one line per result: its verdict, backend,
case and diagnosis.
"""

import dataclasses
import json
from typing import Any, Optional, get_args, get_origin, get_type_hints

VERDICTS = ("PASSED", "FAILED", "MISTRUSTED", "UNIMPLEMENTED", "SKIPPED", "CRASHED", "TIMEOUT",
            "INVALID")
SCHEMA_MAJOR = 2  # the newest major this reader knows (docs/RESULTS.md, "Schema version")


class ResultsError(ValueError):
    """A results document this reader cannot take (wrong format, newer major)."""


def _num(v: Any) -> float:
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ResultsError("not a number: %r" % (v,))
    return float(v)


def _convert(tp: Any, v: Any) -> Any:
    """`v` (parsed JSON) as the annotated type `tp`."""
    if tp is float:
        return _num(v)
    origin, args = get_origin(tp), get_args(tp)
    if origin is not None and type(None) in args:  # Optional[X]
        if v is None:
            return None
        return _convert(next(a for a in args if a is not type(None)), v)
    if origin is list:
        return [_convert(args[0], x) for x in v] if isinstance(v, list) else v
    if origin is dict:
        return {k: _convert(args[1], x) for k, x in v.items()} if isinstance(v, dict) else v
    if dataclasses.is_dataclass(tp) and isinstance(v, dict):
        return _build(tp, v)
    return v


def _build(cls: Any, d: dict[str, Any]) -> Any:
    """An instance of the dataclass `cls` from the JSON object `d`; fields it does
    not name go to `extra`."""
    hints = get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    kw = {k: _convert(hints[k], v) for k, v in d.items() if k in names}
    return cls(**kw, extra={k: v for k, v in d.items() if k not in names})


@dataclasses.dataclass
class Threshold:
    rtol: float = 0.0
    atol: float = 0.0
    origin: str = ""
    normwise_max: Optional[float] = None
    element_max_of_rms: Optional[float] = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Output:
    """One compared tensor of a result."""
    tensor: str = ""
    passed: bool = False
    shape_ok: bool = True
    elements: int = 0
    bad: int = 0
    nan_inf_mismatch: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    headroom: float = 0.0
    nmse: float = 0.0
    normwise: float = 0.0
    worst_index: list[int] = dataclasses.field(default_factory=list)
    worst_got: float = 0.0
    worst_want: float = 0.0
    threshold: Threshold = dataclasses.field(default_factory=Threshold)
    ulp_histogram: list[int] = dataclasses.field(default_factory=list)
    shape_error: Optional[str] = None
    tokens_inside_margin: Optional[int] = None
    argmax_rows: Optional[int] = None
    argmax_agree: Optional[int] = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Hypothesis:
    """One known bug tried against a failure (docs/DIAGNOSES.md)."""
    code: str = ""
    error_vs_hypothesis: float = 0.0
    error_vs_reference: float = 0.0
    informative_outputs: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Diagnosis:
    code: Optional[str] = None  # None: no known bug matched
    ratio: float = 0.0
    text: str = ""
    hypotheses: list[Hypothesis] = dataclasses.field(default_factory=list)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class CaseResult:
    """One case on one backend: `results[i]` of the JSON file."""
    file: str = ""
    case: str = ""
    backend: str = ""
    op: str = ""
    family: str = ""
    verdict: str = ""
    message: str = ""
    first_bad_output: Optional[str] = None
    diagnosis: Diagnosis = dataclasses.field(default_factory=Diagnosis)
    repro: str = ""
    seconds: float = 0.0
    outputs: list[Output] = dataclasses.field(default_factory=list, repr=False)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "PASSED"

    def describe(self) -> str:
        """The verdict line, the diagnosis and the repro line (what a failure shows)."""
        head = "%-13s %-8s %s:%s" % (self.verdict, self.backend, self.file, self.case)
        if self.diagnosis.code:
            head += "  diagnosis: " + self.diagnosis.code
        lines = [head]
        if self.message:
            lines.append("    " + self.message)
        if self.diagnosis.text:
            lines.append("    " + self.diagnosis.text)
        if self.repro:
            lines.append("    repro: " + self.repro)
        return "\n".join(lines)


@dataclasses.dataclass
class BackendInfo:
    name: str = ""
    device: str = ""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Meta:
    """`meta`: the run's metadata (docs/RESULTS.md, "Run metadata")."""
    tool: str = "mtpcheck"
    version: str = ""
    build_commit: str = ""
    commit: str = ""
    run_id: str = ""
    host: str = ""
    system: str = ""
    cpu_model: str = ""
    cpus: int = 0
    threads: int = 0
    command_line: str = ""
    date: str = ""
    seed: int = 0
    backends: list[BackendInfo] = dataclasses.field(default_factory=list)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Machine:
    host: str = ""
    system: str = ""
    cpus: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class Results:
    """A results file (`format` mtpcheck-results), plus the console text of the
    run that wrote it (`console`, not part of the file)."""
    format: str = "mtpcheck-results"
    schema_version: str = ""
    format_version: Optional[int] = None
    meta: Meta = dataclasses.field(default_factory=Meta)
    command: str = ""
    created: str = ""
    machine: Machine = dataclasses.field(default_factory=Machine)
    commit: str = ""
    seed: int = 0
    run_id: str = ""
    summary: dict[str, int] = dataclasses.field(default_factory=dict)
    exit_code: int = 0
    results: list[CaseResult] = dataclasses.field(default_factory=list)
    console: str = dataclasses.field(default="", repr=False)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Results":
        if not isinstance(d, dict) or d.get("format") != "mtpcheck-results":
            raise ResultsError("not an mtpcheck results document (format %r)" % (
                d.get("format") if isinstance(d, dict) else type(d).__name__))
        major = str(d.get("schema_version", "1.0")).split(".")[0]
        if not major.isdigit() or int(major) > SCHEMA_MAJOR:
            raise ResultsError("schema_version %s is newer than this reader takes (%d.x): "
                               "use a newer mtpcheck package" % (d.get("schema_version"), SCHEMA_MAJOR))
        return _build(cls, d)

    @classmethod
    def from_json(cls, text: str) -> "Results":
        return cls.from_dict(json.loads(text))

    @property
    def passed(self) -> bool:
        """Every case that ran passed (exit code 0)."""
        return self.exit_code == 0

    @property
    def failures(self) -> list[CaseResult]:
        """The results that fail a run: FAILED, CRASHED, TIMEOUT, INVALID."""
        return [r for r in self.results if r.verdict in ("FAILED", "CRASHED", "TIMEOUT", "INVALID")]

    @property
    def verdicts(self) -> dict[str, str]:
        """{case: verdict}; with several backends, {case@backend: verdict}."""
        several = len({r.backend for r in self.results}) > 1
        return {(r.case + "@" + r.backend if several else r.case): r.verdict for r in self.results}

    @property
    def diagnoses(self) -> list[str]:
        """The diagnosis codes named, one per result that has one, in order."""
        return [r.diagnosis.code for r in self.results if r.diagnosis.code]

    def __str__(self) -> str:
        counts = ", ".join("%d %s" % (self.summary[v], v) for v in VERDICTS if self.summary.get(v))
        lines = ["mtpcheck %s: %d results: %s (exit %d)" % (
            self.command or "run", len(self.results), counts or "none", self.exit_code)]
        for r in self.results:
            tail = "  " + r.diagnosis.code if r.diagnosis.code else ""
            lines.append("  %-13s %-8s %s%s" % (r.verdict, r.backend, r.case, tail))
        return "\n".join(lines)
