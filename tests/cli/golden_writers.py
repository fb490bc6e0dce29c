#!/usr/bin/python3
"""Golden files of the report writers (JSON, JUnit XML, HTML, Markdown).

Why this exists: a writer that changes a byte of its output changes what CI
systems, dashboards and the schema's readers see; the other tests check
fields, not the whole file. This runs `mtpcheck report` over the fixed inputs
in tests/cli/golden/writers/in/ (two results files, one with a FAILED and
its diagnosis, and a bench file with a record) and compares each output,
byte for byte, with tests/cli/golden/writers/expected/, after replacing what
belongs to the machine and the moment of the run (the report's own host,
system, CPU, thread count, build commit, run id, date and command line) by
placeholders (the version is the code's: a new one is a change). A writer
changed on purpose: refresh the files with

    python3 tests/cli/golden_writers.py build/mtpcheck . --update

and read the diff before committing it.
Usage: golden_writers.py MTPCHECK SOURCE_DIR [--update]   (exit 1 on a difference)
"""

import difflib
import html
import json
import os
import re
import subprocess
import sys
import tempfile

OUTPUTS = {"--json": "report.json", "--junit": "report.xml", "--html": "report.html",
           "--markdown": "report.md"}


def run_report(mtpcheck: str, inputs: list[str], out: str) -> dict[str, str]:
    """The four outputs of one report over inputs, as text by file name."""
    cmd = [mtpcheck, "report", *inputs]
    for flag, name in OUTPUTS.items():
        cmd += [flag, os.path.join(out, name)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 1:  # the inputs hold one FAILED
        sys.exit(f"golden_writers: {' '.join(cmd)} exited {done.returncode}, not 1:\n"
                 f"{done.stdout}{done.stderr}")
    texts = {}
    for name in OUTPUTS.values():
        with open(os.path.join(out, name), encoding="utf-8") as f:
            texts[name] = f.read()
    return texts


def normalise(texts: dict[str, str]) -> dict[str, str]:
    """The outputs with the run's machine and moment as placeholders: each
    value where the writers put it (a JSON key, a JUnit property, an HTML
    meta entry), so that the same word in the data is left alone."""
    meta = json.loads(texts["report.json"])["meta"]
    date = meta["date"]  # 2026-12-05T01:03:49Z
    fields = [("build_commit", "mtpcheck.build_commit", "build commit"), ("host", "host", "host"),
              ("system", "system", "system"), ("cpu_model", "cpu_model", "CPU")]
    pairs = []
    for key, prop, label in fields:
        v, mark = meta[key], f"@{key.upper()}@"
        j, x = json.dumps(v)[1:-1], html.escape(v, quote=True)
        pairs += [(f'"{key}":"{j}"', f'"{key}":"{mark}"'),
                  (f'name="{prop}" value="{x}"', f'name="{prop}" value="{mark}"'),
                  (f"<dt>{label}</dt><dd>{x}</dd>", f"<dt>{label}</dt><dd>{mark}</dd>")]
    host = html.escape(meta["host"], quote=True)
    pairs.append((f'hostname="{host}"', 'hostname="@HOST@"'))
    for v, mark in ((meta["command_line"], "@COMMAND_LINE@"), (meta["run_id"], "@RUN_ID@"),
                    (date, "@DATE@"), (date[:-1], "@DATE@"),
                    (f"{date[:10]} {date[11:16]} UTC", "@DATE@")):
        pairs += [(json.dumps(v)[1:-1], mark), (html.escape(v, quote=True), mark)]
    counts = [(r'"(cpus|threads)":\d+', r'"\1":0'),
              (r'name="(cpus|threads)" value="\d+"', r'name="\1" value="0"'),
              (r"\d+ of \d+ CPUs", "0 of 0 CPUs")]
    out = {}
    for name, text in texts.items():
        for value, mark in pairs:
            text = text.replace(value, mark)
        for rx, rep in counts:
            text = re.sub(rx, rep, text)
        out[name] = text
    return out


def main() -> int:
    """Compares (or with --update writes) the golden files; the exit code."""
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--update"]):
        sys.exit("usage: golden_writers.py MTPCHECK SOURCE_DIR [--update]")
    mtpcheck, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    base = os.path.join(src, "tests", "cli", "golden", "writers")
    inputs = [os.path.join(base, "in", n) for n in ("results.json", "results2.json", "bench.json")]
    with tempfile.TemporaryDirectory(prefix="mtp-golden.") as out:
        got = normalise(run_report(mtpcheck, inputs, out))
    if sys.argv[3:] == ["--update"]:
        os.makedirs(os.path.join(base, "expected"), exist_ok=True)
        for name, text in got.items():
            with open(os.path.join(base, "expected", name), "w", encoding="utf-8") as f:
                f.write(text)
        print(f"golden_writers: wrote {len(got)} files into {base}/expected")
        return 0
    bad = 0
    for name, text in got.items():
        with open(os.path.join(base, "expected", name), encoding="utf-8") as f:
            want = f.read()
        if text != want:
            bad += 1
            diff = difflib.unified_diff(want.splitlines(), text.splitlines(), "expected/" + name,
                                        "now/" + name, lineterm="", n=1)
            print("\n".join(list(diff)[:30]))
            print(f"golden_writers: {name} differs from its golden file")
    if bad:
        print("golden_writers: a writer changed; if on purpose: "
              "python3 tests/cli/golden_writers.py build/mtpcheck . --update")
        return 1
    print(f"golden_writers: {len(got)} outputs match their golden files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
