#!/usr/bin/python3
"""Counts the ROUNDING_BIAS test over mtpcheck JSON results (docs/DIAGNOSES.md).

Why this exists: the test's false-alarm rate is a claim to measure, not to
assume. For each backend in the given results files this prints how many
outputs were tested, how many fired, how many reached |z| >= 6 without firing
(their mean below 0.1 ulp), how many float32 outputs met both thresholds but
are report-only (they never fire: docs/DIAGNOSES.md), and the largest |z| seen, so that a run
on any machine (the CUDA suite on a GPU host included) gives the figures for
the table in docs/DIAGNOSES.md.

  /usr/bin/python3 tools/bias/bias_count.py out/cuda-quick.json out/cuda-nightly.json
"""

import json
import sys


def main(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for r in doc.get("results", []):
            b = rows.setdefault(r.get("backend", "?"), {"outputs": 0, "tested": 0, "fired": 0,
                                                         "z6": 0, "f32": 0, "max": (0.0, None, None)})
            for c in r.get("outputs", r.get("tensors", [])):
                b["outputs"] += 1
                z = c.get("rounding_bias_z")
                if z is None:
                    continue
                b["tested"] += 1
                reached = abs(z) >= 6 and abs(c.get("rounding_bias_mean_ulp", 0)) >= 0.1
                # results files before rounding_bias_fired: a reach was a firing
                fired = c.get("rounding_bias_fired", reached)
                b["fired"] += fired
                b["z6"] += abs(z) >= 6 and not reached
                b["f32"] += reached and not fired
                if abs(z) > abs(b["max"][0]):
                    b["max"] = (z, c.get("rounding_bias_mean_ulp"), "%s:%s %s" % (
                        r.get("file", ""), r.get("case", r.get("case_id", "")), c.get("tensor")))
    print("%-12s %8s %8s %6s %6s %6s %8s %10s  where" % ("backend", "outputs", "tested", "fired", "z>=6",
                                                           "f32", "max|z|", "mean(ulp)"))
    for name, b in sorted(rows.items()):
        z, mean, where = b["max"]
        print("%-12s %8d %8d %6d %6d %6d %8.2f %10s  %s" % (name, b["outputs"], b["tested"], b["fired"],
                                                             b["z6"], b["f32"], abs(z),
                                                         "%.3f" % mean if mean is not None else "-",
                                                         where or ""))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
