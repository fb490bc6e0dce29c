#!/usr/bin/python3
"""Regenerates the version dumps (version_dumps.py) and checks that
`mtpcheck` keeps each file valid under the version it declares
(docs/FORMAT.md: each rule says the versions it applies to): version 1's soft
links to another case's observed/ datasets, and from them, are read and
judged; a version 1 golden holding some outputs is judged on those, marked
partial; the same files as version 2 are refused (v2 rule 12, complete
goldens); weights by reference or by row subset in a version 1 file are
refused with one line naming the file, the object and the attribute.

  /usr/bin/python3 tools/gen/check_version_dumps.py build/mtpcheck
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from checks import finish, mtpcheck


def results(binary, d, *args):
    js = os.path.join(d, "out.json")
    rc, out = mtpcheck(binary, *args, "--json", js)
    if not os.path.exists(js):
        return rc, {}, out
    with open(js) as f:
        res = {r["case"]: r for r in json.load(f)["results"]}
    os.remove(js)
    return rc, res, out


def check_v1_links(binary, d):
    fails = []
    for name in ("v1_link_target.h5", "v1_link_source.h5"):
        rc, res, out = results(binary, d, "verify", os.path.join(d, name))
        verdicts = {c: r["verdict"] for c, r in res.items()}
        if rc != 0 or len(res) != 2 or set(verdicts.values()) != {"PASSED"}:
            fails.append("%s: rc %d %s, want 2 PASSED\n%s" % (name, rc, verdicts, out))
    return fails


def check_v1_partial(binary, d):
    rc, res, out = results(binary, d, "run", "--fixtures", os.path.join(d, "v1_partial.h5"))
    want = {"partial.step": "PASSED", "partial.add_rmsnorm": "PASSED", "partial.wrong": "FAILED"}
    got = {c: r["verdict"] for c, r in res.items()}
    fails = []
    if rc != 1 or got != want:
        fails.append("v1_partial.h5: rc %d %s, want %s\n%s" % (rc, got, want, out))
    for c, r in res.items():
        if not r.get("partial") or "not judged: " not in r.get("judged", ""):
            fails.append("v1_partial.h5:%s not marked partial: %s" % (c, r))
    wrong = res.get("partial.wrong", {})
    if wrong.get("first_bad_output") != "hidden_post":
        fails.append("partial.wrong: first bad output %s, want hidden_post"
                     % wrong.get("first_bad_output"))
    return fails


REFUSED = {
    "v2_link_target.h5": r"/cases/step1/inputs/prev_hidden: soft link to "
                         r"'/cases/step0/observed/recycled': observed/ datasets are never link targets",
    "v2_link_source.h5": r"/cases/donor/observed/\w+: is a soft link",
    "v2_partial.h5": r"/cases/partial.step: expected/\w+: missing \(a golden holds every output",
    "v1_ref.h5": r"/cases/ref.v1/inputs/\w+_weight: attribute 'ref_file' .*needs format_version 2",
    "v1_subset.h5": r"/cases/subset.v1/inputs/head_weight: attribute 'full_rows' .*needs format_version 2",
}


def check_refused(binary, d):
    fails = []
    for name, pat in REFUSED.items():
        path = os.path.join(d, name)
        rc, out = mtpcheck(binary, "verify" if "partial" not in name else "run",
                           *([path] if "partial" not in name else ["--fixtures", path]))
        lines = [ln for ln in out.splitlines() if ln.startswith("mtpcheck: " + path + ": ")]
        if rc != 2 or len(lines) != 1 or not re.search(pat, lines[0]):
            fails.append("%s: rc %d, want 2 and one line matching /%s/\n%s" % (name, rc, pat, out))
    return fails


def main(binary):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, os.path.join(HERE, "version_dumps.py"), d], check=True)
        fails = check_v1_links(binary, d) + check_v1_partial(binary, d) + check_refused(binary, d)
    finish(fails, "format versions",
           "format versions: version 1 links and partial goldens judged; the version 2 rules"
           " and features refused where a file declares version 1 or breaks them")


if __name__ == "__main__":
    main(sys.argv[1])
