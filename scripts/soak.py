#!/usr/bin/env python3
"""Soak: mixed use of the real `svc serve` on the 2,000-note corpus while its processes are killed.

For --minutes (default 3), at once:
- four readers: /api/search, /api/query, /api/doc and /api/status, in turn;
- one API writer: POST /api/docs (overwrite) creating and rewriting notes under api/, each version
  holding a word of its own;
- one disk editor: another program writing, rewriting (half of the time as a temp file renamed over
  the note, as editors save) and deleting notes under disk/ of the watched folder;
- a chaos loop: SIGKILL of the worker and of the gateway in turn, and once of the whole process
  tree (then `svc serve` again on the same dirs).
Then, with the writers stopped, it checks:
- every acknowledged write is on disk as acknowledged, or as a later attempt at that note;
- the index agrees with the disk: document counts equal, `/api/doc` returns every note's bytes,
  the newest word of every written note finds it;
- no 5xx reply other than 503; recovery after every kill within 10 s;
- worker and gateway memory: the last quarter's median against the first quarter's (judged in
  runs of 10 minutes or more; a shorter run only reports it).
Exit status 1 when a check fails. Python standard library only; uses scripts/bench.py's helpers.
The notes come from scripts/corpus_gen.py (deterministic, seed 42).
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
import svclib

COLLECTION = "notes"
READERS = 4
RECOVERY_LIMIT_S = 10.0
SETTLE_LIMIT_S = 90.0
MEMORY_JUDGED_MINUTES = 10
QUERIES = ["network", "memory", "project", "design", "meeting", "rust", "search", "index"]


def log(msg):
    print(f"[soak] {msg}", file=sys.stderr, flush=True)


class Target:
    """The port of the running server; it changes when the whole tree is started again."""

    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()

    def get(self):
        with self.lock:
            return self.port

    def set(self, port):
        with self.lock:
            self.port = port


class Tally:
    """Replies by status, and every 5xx other than 503 with its request."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_status = {}
        self.refused = 0
        self.bad = []
        # Readers only ask for notes that exist and writers send valid bodies: a 4xx is a defect.
        self.client_errors = []

    def count(self, method, path, status, payload):
        with self.lock:
            self.by_status[status] = self.by_status.get(status, 0) + 1
            if status >= 500 and status != 503:
                self.bad.append(f"{method} {path} -> {status}: {str(payload)[:300]}")
            elif 400 <= status < 500 and len(self.client_errors) < 20:
                self.client_errors.append(f"{method} {path} -> {status}: {str(payload)[:300]}")

    def refuse(self):
        with self.lock:
            self.refused += 1


def call(target, tally, method, path, body=None, timeout=30):
    """One request on a fresh connection; (status, payload), or (None, None) when refused."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", target.get(), timeout=timeout)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
    except (OSError, http.client.HTTPException):
        tally.refuse()
        return None, None
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = raw.decode("utf-8", "replace")
    tally.count(method, path, resp.status, payload)
    return resp.status, payload


def word(tag, n):
    """A word no other note holds: letters only."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    digits = "".join(letters[int(c)] for c in str(n))
    return f"soak{tag}{digits}q"


def reader(target, tally, uris, stop):
    rng = random.Random()
    while not stop.is_set():
        q = rng.choice(QUERIES)
        choice = rng.randrange(4)
        if choice == 0:
            call(target, tally, "POST", "/api/search", {"query": q, "limit": 10})
        elif choice == 1:
            call(target, tally, "POST", "/api/query", {"query": q, "limit": 5, "noExpand": True, "noRerank": True})
        elif choice == 2:
            call(target, tally, "GET", "/api/doc?uri=" + urllib.parse.quote(rng.choice(uris), safe=""))
        else:
            call(target, tally, "GET", "/api/status")


class Writes:
    """Per note: the content last acknowledged and the attempts after it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}
        self.later = {}
        self.count = 0

    def attempt(self, rel, content):
        with self.lock:
            self.later.setdefault(rel, []).append(content)

    def ack(self, rel, content):
        with self.lock:
            self.acked[rel] = content
            self.later[rel] = []
            self.count += 1


def api_writer(target, tally, writes, stop):
    rng = random.Random(1)
    n = 0
    while not stop.is_set():
        n += 1
        rel = f"api/note-{rng.randrange(60)}.md"
        w = word("a", n)
        content = f"# API note {n}\n\nWritten through the API, version {n}: {w}.\n"
        writes.attempt(rel, content)
        status, _ = call(target, tally, "POST", "/api/docs",
                         {"collection": COLLECTION, "relPath": rel, "content": content, "overwrite": True})
        if status in (200, 201, 202):
            writes.ack(rel, content)
        else:
            time.sleep(0.2)
        time.sleep(0.05)


def disk_editor(root, edits, stop):
    """Writes, rewrites and deletes notes under disk/ as another program would."""
    rng = random.Random(2)
    folder = os.path.join(root, "disk")
    os.makedirs(folder, exist_ok=True)
    n = 0
    while not stop.is_set():
        n += 1
        rel = f"disk/note-{rng.randrange(80)}.md"
        path = os.path.join(root, rel)
        if rng.random() < 0.1 and os.path.exists(path):
            os.remove(path)
            edits.discard(rel)
        else:
            w = word("d", n)
            content = f"# Disk note {n}\n\nSaved by another program, version {n}: {w}.\n"
            if rng.random() < 0.5:
                tmp = os.path.join(folder, f".{os.path.basename(rel)}.swp")
                with open(tmp, "w") as f:
                    f.write(content)
                os.replace(tmp, path)
            else:
                with open(path, "w") as f:
                    f.write(content)
            edits.add(rel)
        time.sleep(0.1)


def healthy(target):
    """A search answers 200 (counted apart from the soak's own replies)."""
    return call(target, Tally(), "POST", "/api/search", {"query": "network"}, timeout=5)[0] == 200


def wait_recovered(target, since, old_pid, role, server):
    """Seconds from the kill until a new process of `role` runs and a search answers 200."""
    while time.monotonic() - since < 60:
        pid = server.processes().get(role) if role else server.proc.pid
        if pid and pid != old_pid and healthy(target):
            return time.monotonic() - since
        time.sleep(0.02)
    return None


def chaos(server, target, stop, kills, minutes):
    """Kills the worker and the gateway in turn; the whole tree once, halfway."""
    interval = min(15.0, max(6.0, minutes * 60 / 14))
    rng = random.Random(3)
    whole_done = False
    started = time.monotonic()
    turn = 0
    while not stop.wait(interval * rng.uniform(0.7, 1.3)):
        procs = server.processes()
        if not whole_done and time.monotonic() - started > minutes * 30:
            whole_done = True
            t0 = time.monotonic()
            for pid in [procs.get("worker"), procs.get("gateway"), procs["supervisor"]]:
                if pid:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            server.proc.wait()
            server.start()
            target.set(server.port)
            kills.append(("tree", time.monotonic() - t0))
            log(f"killed the whole tree; serving again on port {server.port} after {kills[-1][1]:.2f} s")
            continue
        role = "worker" if turn % 3 != 2 else "gateway"
        turn += 1
        pid = procs.get(role)
        if not pid:
            continue
        t0 = time.monotonic()
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        took = wait_recovered(target, t0, pid, role, server)
        kills.append((role, took))
        log(f"killed the {role} ({pid}); recovered in {'never' if took is None else f'{took:.2f} s'}")


def sample_memory(server, stop, samples):
    while not stop.wait(2.0):
        procs = server.processes()
        samples.append((time.monotonic(), svclib.rss_mb(procs["worker"]) if "worker" in procs else None,
                        svclib.rss_mb(procs["gateway"]) if "gateway" in procs else None))


def quarters(samples, index):
    """The first and the last quarter of a process's RSS samples (MB)."""
    values = [s[index] for s in samples if s[index] is not None]
    if len(values) < 8:
        return None, None
    q = len(values) // 4
    return values[:q], values[-q:]


def median(values):
    xs = sorted(values)
    return xs[len(xs) // 2]


def on_disk(root):
    out = {}
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for name in names:
            if name.endswith(".md") and not name.startswith("."):
                path = os.path.join(d, name)
                out[os.path.relpath(path, root)] = path
    return out


def index_agrees(target, tally, root, writes, edits):
    """The problems left between the index and the disk (empty when they agree)."""
    problems = []
    files = on_disk(root)
    status, st = call(target, tally, "GET", "/api/status")
    if status != 200:
        return [f"status -> {status}"]
    if st.get("totalDocuments") != len(files):
        problems.append(f"{st.get('totalDocuments')} documents indexed, {len(files)} notes on disk")
    # The word of each written note as it is on disk now: a write whose reply was lost (the
    # gateway killed while it ran) may still have landed, after the last acknowledged one.
    newest = {}
    for rel in sorted(set(writes.acked) | edits):
        if rel in files:
            with open(files[rel], encoding="utf-8") as f:
                m = re.search(r"\b(soak[a-z]+q)\b", f.read())
            if m:
                newest[rel] = m.group(1)
    for rel, w in sorted(newest.items()):
        status, hits = call(target, tally, "POST", "/api/search", {"query": w, "limit": 3})
        uris = [h.get("uri") for h in (hits or {}).get("results", [])] if status == 200 else []
        if uris[:1] != [f"svc://{COLLECTION}/{rel}"]:
            # Which store is behind: the catalog (the document's text) or the keyword index.
            _, doc = call(target, tally, "GET", "/api/doc?uri=" + urllib.parse.quote(f"svc://{COLLECTION}/{rel}", safe=""))
            held = isinstance(doc, dict) and w in doc.get("content", "")
            problems.append(f"{w} (newest word of {rel}) finds {uris}; the catalog {'holds' if held else 'lacks'} it")
    return problems


def doc_bytes_agree(target, tally, root):
    problems = []
    for rel, path in sorted(on_disk(root).items()):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        uri = f"svc://{COLLECTION}/{rel}"
        status, doc = call(target, tally, "GET", "/api/doc?uri=" + urllib.parse.quote(uri, safe=""))
        if status != 200 or doc.get("content") != text:
            problems.append(f"/api/doc {uri} -> {status}, {'other bytes' if status == 200 else doc}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "svc"))
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="svc-soak-")
    server = svclib.Server(os.path.abspath(args.bin), tmp)
    failures = []
    try:
        root = os.path.join(tmp, COLLECTION)
        os.makedirs(root)
        svclib.make_notes(root, args.notes)
        server.start()
        target = Target(server.port)
        tally = Tally()
        t0 = time.monotonic()
        status, added = call(target, tally, "POST", "/api/collections", {"path": root, "name": COLLECTION})
        if status != 202:
            raise RuntimeError(f"POST /api/collections -> {status}: {added}")
        svclib.wait_job(svclib.Http(server.port), added["jobId"], 600)
        log(f"{args.notes} notes indexed in {time.monotonic() - t0:.1f} s; soaking for {args.minutes} min")
        uris = [f"svc://{COLLECTION}/{rel}" for rel in sorted(on_disk(root))]

        stop, stop_chaos = threading.Event(), threading.Event()
        writes, edits, kills, samples = Writes(), set(), [], []
        threads = [threading.Thread(target=reader, args=(target, tally, uris, stop)) for _ in range(READERS)]
        threads.append(threading.Thread(target=api_writer, args=(target, tally, writes, stop)))
        threads.append(threading.Thread(target=disk_editor, args=(root, edits, stop)))
        threads.append(threading.Thread(target=sample_memory, args=(server, stop, samples)))
        chaos_thread = threading.Thread(target=chaos, args=(server, target, stop_chaos, kills, args.minutes))
        for t in threads + [chaos_thread]:
            t.start()
        time.sleep(args.minutes * 60)
        stop_chaos.set()
        chaos_thread.join()
        stop.set()
        for t in threads:
            t.join()
        log("writers stopped; checking")

        # Acknowledged writes: on disk as acknowledged, or as a later attempt.
        lost = []
        for rel, content in writes.acked.items():
            path = os.path.join(root, rel)
            disk = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if disk != content and disk not in writes.later.get(rel, []):
                lost.append(rel)
        if lost:
            failures.append(f"acknowledged writes not on disk as acknowledged: {lost}")

        # The index catches up with the disk by itself (the watcher), within a bound. The
        # checks count their replies apart: a note not indexed yet is a 404 while it settles.
        checks = Tally()
        settle_start = time.monotonic()
        problems = index_agrees(target, checks, root, writes, edits)
        while problems and time.monotonic() - settle_start < SETTLE_LIMIT_S:
            time.sleep(1.0)
            problems = index_agrees(target, checks, root, writes, edits)
        settled = time.monotonic() - settle_start
        if problems:
            failures.append(f"index and disk disagree after {SETTLE_LIMIT_S:.0f} s: {problems[:10]}")
        problems = doc_bytes_agree(target, checks, root)
        if problems:
            failures.append(f"/api/doc differs from the disk: {problems[:10]}")
        if tally.client_errors:
            failures.append(f"4xx replies to valid requests: {tally.client_errors[:5]}")
        if tally.bad or checks.bad:
            bad = tally.bad + checks.bad
            failures.append(f"{len(bad)} replies 5xx other than 503: {bad[:5]}")
        slow = [(role, took) for role, took in kills if took is None or took > RECOVERY_LIMIT_S]
        if slow:
            failures.append(f"recoveries over {RECOVERY_LIMIT_S:.0f} s: {slow}")
        memory = {}
        # Medians: a process killed and started again peaks for a moment while it catches up.
        for name, index in (("worker", 1), ("gateway", 2)):
            first, last = quarters(samples, index)
            if first is None:
                continue
            memory[name] = {"first_quarter_median_mb": median(first), "last_quarter_median_mb": median(last),
                            "first_quarter_peak_mb": max(first), "last_quarter_peak_mb": max(last)}
            # A short run holds too few restarts for the medians to settle (a worker that just
            # started catches up at a higher RSS): memory is judged in runs of 10 minutes or more.
            if args.minutes >= MEMORY_JUDGED_MINUTES and median(last) > median(first) * 1.3 + 16:
                failures.append(f"{name} memory grew: median {median(first):.0f} MB in the first quarter, "
                                f"{median(last):.0f} MB in the last")
        figures = {
            "minutes": args.minutes, "notes": args.notes, "requests": sum(tally.by_status.values()),
            "by_status": {str(k): v for k, v in sorted(tally.by_status.items())}, "refused_connections": tally.refused,
            "kills": len(kills), "kills_by_role": {r: sum(1 for k in kills if k[0] == r) for r in ("worker", "gateway", "tree")},
            "recovery_max_s": round(max((k[1] for k in kills if k[1] is not None), default=0.0), 2),
            "api_writes_acknowledged": writes.count, "api_notes_checked": len(writes.acked), "lost_writes": len(lost),
            "disk_notes_edited": len(edits), "notes_on_disk": len(on_disk(root)), "index_settled_s": round(settled, 2),
            "memory": memory, "failures": failures,
        }
        print(json.dumps(figures, indent=1))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(figures, f, indent=1)
    finally:
        server.stop()
        if failures:
            log("server log tail:\n" + server.log_tail(60))
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        for f in failures:
            log(f"FAIL: {f}")
        return 1
    log("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
