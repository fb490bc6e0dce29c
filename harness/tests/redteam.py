"""Red-team test: runs one misbehaving backend (plugin_redteam.c) beside the
built-in reference through the command line, with workers and with
--isolate, and checks what the harness promises (docs/CI.md, "Guarantees:
backends"): the verdicts, never a PASSED for the plugin, the reference still
run under its own name, the run going on after each fault (a backend that
dies while opening included), reports that parse, exit 1, no descriptor but
the documented ones in the backend's process; and that SIGTERM/SIGINT end a
run with its reports and no process left.

usage: redteam.py MTPCHECK PLUGIN CLASS
"""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

# class -> (verdict, words one of which the message holds)
EXPECT = {
    "segv": ("CRASHED", ["signal 11", "exit status"]),
    "abort": ("CRASHED", ["signal 6", "exit status"]),
    "exit0": ("CRASHED", ["ended the process (exit status 0)"]),
    "hang": ("TIMEOUT", ["no result within"]),
    "liar": ("CRASHED", ["malformed report from the worker"]),
    "spray": ("CRASHED", ["malformed report", "signal 6", "exit status"]),
    "overflow": ("CRASHED", ["wrote 8 bytes past output y"]),
    "hostile": ("FAILED", ["device error: <b>"]),
    "nasty": ("CRASHED", ["ended the process (exit status 0)"]),
    # under AddressSanitizer its handler turns the SIGSEGV into exit status 1
    "open_crash": ("CRASHED", ["while opening the backend: the backend "
                               "crashed: Segmentation fault (signal 11)",
                               "while opening the backend: the backend "
                               "ended the process (exit status 1)"]),
    "open_exit0": ("CRASHED", ["while opening the backend: the backend "
                               "ended the process (exit status 0)"]),
    "underflow": ("CRASHED", ["wrote 8 bytes before output y"]),
    # a timer of the backend's own (as a runtime's may be): the worker says
    # who sent the signal, on stderr, before it dies of it
    "open_alarm": ("CRASHED", ["while opening the backend: the backend "
                               "crashed: Alarm clock (signal 14)"]),
    # a first open that crashes, then opens: started once more, the cases
    # run (and fail: the plugin leaves its outputs zero)
    "open_flaky": ("FAILED", [""]),
    # the plugin fails every case with the descriptors it saw at open and
    # at launch, which must be exactly the documented set (FDS_OK)
    "fds": ("FAILED", ["device error: descriptors at open: "]),
}
# classes that die opening the backend run before ref: a death there must
# not take the backends after it along
OPEN_FIRST = ("open_crash", "open_exit0", "open_alarm", "open_flaky")
# the console line of a worker lost while it opened, started once more
AGAIN = "the worker was lost while opening the backend: "

FDS_OK = (r"descriptors at open: as documented \(0 /dev/null, 1 = 2, "
          r"request pipe \d+, report pipe \d+\); at launch: as documented "
          r"\(0 /dev/null, 1 = 2, request pipe \d+, report pipe \d+\)$")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def gone(pid):
    """Whether pid has ended (within 3 s: a SIGKILL is delivered
    asynchronously); a zombie has ended."""
    for _ in range(60):
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split(")")[-1].split()[0] in "ZX":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def pids(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def check_devices(doc, xml, page, cls, tag):
    """The plugin's device line (its worker's hello, never read in the
    harness's process) is in every report, cleaned: no control character
    in the JSON, markup escaped in the JUnit and HTML."""
    name = "rt_" + cls
    dev = {b["name"]: b["device"] for b in doc["meta"]["backends"]}
    check(dev.get("ref", "").startswith("scalar C reference"),
          tag + ": ref's device line in the JSON: %r" % dev.get("ref"))
    got = dev.get(name, "")
    check(got and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in got),
          tag + ": the plugin's device line in the JSON, cleaned: %r" %
          got[:80])
    if cls == "hostile":
        check(got.startswith("<b>\"'&\\x01\\x1b[31m\ufffd"),
              tag + ": the hostile device line as sent: %r" % got[:40])
    props = {}
    for suite in xml.getroot().iter("testsuite"):
        for p in suite.iter("property"):
            props[p.get("name")] = p.get("value")
    check(props.get("device." + name) == got,
          tag + ": the JUnit property device.%s is the JSON's" % name)
    check("device of " + name in page and "</property>" not in page,
          tag + ": the device line is in the HTML header, escaped")


def check_reports(d, tag, cls):
    with open(os.path.join(d, "r.json"), "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))  # strict UTF-8
    xml = ET.parse(os.path.join(d, "r.xml"))
    with open(os.path.join(d, "r.html"), "rb") as f:
        page = f.read().decode("utf-8")
    # rt_hostile's text, raw (the page's own markup has <b> of its own)
    check('<b>"&' not in page and "]]></failure>" not in page,
          tag + ": markup from the backend is escaped in HTML")
    check_devices(doc, xml, page, cls, tag)
    return doc


def run_class(mtp, plugin, cls, d, isolate):
    tag = cls + (" --isolate" if isolate else "")
    timeout = "3" if cls == "hang" else "30"
    order = ("rt_%s,ref" if cls in OPEN_FIRST else "ref,rt_%s") % cls
    cmd = [mtp, "run", "--backend", order, "--backend-lib",
           plugin, "--cases", "t.case", "--timeout", timeout, "--json",
           "r.json", "--junit", "r.xml", "--html", "r.html"]
    if isolate:
        cmd.append("--isolate")
    env = dict(os.environ, RT_PIDFILE=os.path.join(d, "pids"))
    if os.path.exists(env["RT_PIDFILE"] + ".flaky"):
        os.remove(env["RT_PIDFILE"] + ".flaky")
    # descriptors mtpcheck inherits (not close-on-exec), which no backend
    # may see; the harness's own (reports, other workers' pipes) likewise.
    # Two sit where the worker moves its pipe ends (isolate.c child_fds),
    # which must still reach the worker, not be closed in its place.
    leak = [os.open(os.path.join(d, "leak"), os.O_WRONLY | os.O_CREAT)]
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = 1000 if soft < 0 or soft >= 1024 else soft - 3
    for fd in (top, top + 1):
        leak.append(os.dup2(leak[0], fd))
    try:
        p = subprocess.run(cmd, cwd=d, env=env, capture_output=True,
                           timeout=100, pass_fds=leak)
    finally:
        for fd in leak:
            os.close(fd)
    check(p.returncode == 1, "%s: exit %d, want 1 (%s)" %
          (tag, p.returncode, p.stderr.decode(errors="replace")[-300:]))
    doc = check_reports(d, tag, cls)
    res = doc["results"]
    ref = [r for r in res if r["backend"] == "ref"]
    rt = [r for r in res if r["backend"] == "rt_" + cls]
    check(len(ref) == 2 and all(r["verdict"] == "PASSED" for r in ref),
          tag + ": ref runs as the built-in and passes")
    check(len(rt) == 2, tag + ": the run goes on after a fault")
    want, words = EXPECT[cls]
    if cls == "fds":
        for r in rt:
            check(re.search(FDS_OK, r["message"]) is not None,
                  "%s: the backend saw %r" % (tag, r["message"]))
    for r in rt:
        check(r["verdict"] == want and any(w in r["message"] for w in words),
              "%s: %s %r, want %s with one of %s" %
              (tag, r["verdict"], r["message"][:200], want, words))
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    if cls in OPEN_FIRST:
        check(AGAIN in out and "starting it once more" in out,
              tag + ": the lost open is said and tried once more: %r" %
              out[:300])
    if cls == "open_alarm":
        check("mtpcheck worker: SIGALRM (si_code 128, sent by pid 0)" in err,
              tag + ": the worker names the timer's signal: %r" % err[-300:])
    for pid in pids(env["RT_PIDFILE"]):
        check(gone(pid), "%s: process %d left behind" % (tag, pid))


def run_signal(mtp, plugin, d, isolate, sig):
    tag = "hang stopped by %s%s" % (sig.name, " --isolate" if isolate else "")
    pf = os.path.join(d, "sigpids")
    if os.path.exists(pf):
        os.remove(pf)
    cmd = [mtp, "run", "--backend", "ref,rt_hang", "--backend-lib", plugin,
           "--cases", "t.case", "--timeout", "60", "--json", "s.json"]
    if isolate:
        cmd.append("--isolate")
    p = subprocess.Popen(cmd, cwd=d, env=dict(os.environ, RT_PIDFILE=pf),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.time()
    while not pids(pf) and time.time() - t0 < 30:
        time.sleep(0.05)
    check(pids(pf), tag + ": the plugin started")
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    check(rc == 128 + sig, "%s: exit %s, want %d" % (tag, rc, 128 + sig))
    with open(os.path.join(d, "s.json"), "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    check(doc["exit_code"] == 128 + sig, tag + ": the report's exit code")
    check(not any(r["verdict"] == "PASSED" and r["backend"] == "rt_hang"
                  for r in doc["results"]), tag + ": no PASSED")
    for pid in pids(pf):
        check(gone(pid), "%s: process %d left behind" % (tag, pid))


def main():
    mtp, plugin = (os.path.abspath(a) for a in sys.argv[1:3])
    cls = sys.argv[3]
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "t.case"), "w") as f:
            f.write("op=rmsnorm R=4,5 H=64\n")
        if cls == "clash":
            p = subprocess.run([mtp, "run", "--backend", "ref", "--backend",
                                "ref", "--backend-lib", plugin, "--cases",
                                "t.case"], cwd=d, capture_output=True)
            check(p.returncode == 0, "ref is the built-in, never the plugin")
            p = subprocess.run([mtp, "run", "--backend", "ref,rt_x",
                                "--backend-lib", plugin, "--cases", "t.case"],
                               cwd=d, capture_output=True)
            err = p.stderr.decode()
            check(p.returncode == 2 and "built-in" in err,
                  "a plugin named like a built-in: exit %d, %r" %
                  (p.returncode, err))
        else:
            for isolate in (False, True):
                run_class(mtp, plugin, cls, d, isolate)
        if cls == "hang":
            run_signal(mtp, plugin, d, False, signal.SIGTERM)
            run_signal(mtp, plugin, d, True, signal.SIGINT)
    print("redteam %s: %s" % (cls, "FAILED" if FAILURES else "ok"))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
