"""The live index, measured (scripts/bench.py --corpus watch): svc follows a watched folder while
another program changes it.

- edit -> searchable: a note of the 2,000-note corpus rewritten on disk (in place, or saved as a
  temp file renamed over it, as editors do), timed to the first search whose top hit is that note
  with the new word;
- a burst: 300 new notes written one after the other into an existing folder (fewer than a
  batch's 512 files, so followed file by file, not by a scan), timed until all are indexed;
- a checkout: 10,000 new files copied into the folder by one command, timed until all are indexed,
  with `/api/search` latency meanwhile and the number of reconciling scans the watcher ran;
- startup: 50,000 indexed notes, three changed while svc was stopped; timed from spawn to every
  collection `watching` and to the changes searchable;
- idle: CPU time of all svc processes over 10 s with nothing changing, and the worker's RSS with the
  folder watched and with `watch: false`.
Python standard library only; imported by scripts/bench.py, imports scripts/svclib.py.
"""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import svclib

EDIT_PROBES = 200
EDIT_TIMEOUT_S = 10.0
BURST_FILES = 300
CHECKOUT_FILES = 10_000
CHECKOUT_FOLDERS = 20
CHECKOUT_TIMEOUT_S = 300.0
CHECKOUT_READERS = 2
STARTUP_NOTES = 50_000
STARTUP_TIMEOUT_S = 120.0
IDLE_SECONDS = 10.0
POLL_S = 0.005

# (key, label, format, target, max) — rows of the printed table.
ROWS = [
    ("edit_searchable_p50_ms", "edit on disk -> searchable p50 (ms)", "{:.0f}", "<= 300 ms", 300.0),
    ("edit_searchable_p99_ms", "edit on disk -> searchable p99 (ms)", "{:.0f}", "<= 1000 ms", 1000.0),
    ("edit_searchable_failures", f"edits not searchable within {EDIT_TIMEOUT_S:.0f} s", "{:d}", "0", 0),
    ("burst_searchable_s", f"burst: {BURST_FILES} new notes written one by one -> all indexed (s)", "{:.2f}", "", None),
    ("checkout_files", "checkout: files created by one command", "{:d}", "", None),
    ("checkout_copy_s", "checkout: the copy itself (s)", "{:.2f}", "", None),
    ("checkout_searchable_s", "checkout: all searchable (s, from the copy's start)", "{:.2f}", "<= 15 s", 15.0),
    ("checkout_search_p50_ms", "checkout: /api/search p50 meanwhile (ms)", "{:.2f}", "", None),
    ("checkout_search_p99_ms", "checkout: /api/search p99 meanwhile (ms)", "{:.2f}", "<= 50 ms", 50.0),
    ("checkout_search_errors", "checkout: failed searches meanwhile", "{:d}", "0", 0),
    ("checkout_scans", "checkout: reconciling scans the watcher ran", "{:d}", "", None),
    ("startup_notes", "startup: notes indexed", "{:d}", "", None),
    ("startup_first_index_s", "startup: first index of those notes (s)", "{:.1f}", "", None),
    ("startup_healthy_s", "startup: spawn -> healthy (s)", "{:.2f}", "", None),
    ("startup_watching_s", "startup: spawn -> watching (s)", "{:.2f}", "<= 5 s", 5.0),
    ("startup_caught_up_s", "startup: spawn -> changes made while stopped searchable (s)", "{:.2f}", "", None),
    ("idle_cpu_pct", f"idle: CPU of all svc processes over {IDLE_SECONDS:.0f} s (% of one core)", "{:.2f}", "", None),
    ("watch_dirs", "startup: folders watched", "{:d}", "", None),
    ("worker_rss_watching_mb", "startup: worker RSS, watching (MB)", "{:.1f}", "", None),
    ("worker_rss_unwatched_mb", "startup: worker RSS, watch: false (MB)", "{:.1f}", "", None),
    ("worker_rss_unwatched_synced_mb", "startup: worker RSS, watch: false, after one sync (MB)", "{:.1f}", "", None),
    ("idle_cpu_unwatched_pct", "idle: CPU with watch: false (% of one core)", "{:.2f}", "", None),
]


# ---------------------------------------------------------------- helpers

def status(client):
    code, st = client.request("GET", "/api/status")
    if code != 200 or not isinstance(st, dict):
        raise RuntimeError(f"GET /api/status -> {code}: {st}")
    return st


def collection_status(client, name):
    for c in status(client).get("collections", []):
        if c.get("name") == name:
            return c
    return None


def wait_for(what, check, timeout_s, pause=0.02):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(pause)
    raise RuntimeError(f"{what}: not within {timeout_s} s")


def top_hit(client, query):
    code, payload = client.request("POST", "/api/search", {"query": query, "limit": 1})
    hits = payload.get("results") if code == 200 and isinstance(payload, dict) else None
    return hits[0].get("uri") if hits else None


def doc_uri(collection, rel):
    return f"svc://{collection}/{rel}"


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        stat = svclib.read_proc(pid, "stat")
        if stat:
            fields = stat[stat.rfind(b")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def idle_cpu_pct(server):
    pids = list(server.processes().values())
    t0, c0 = time.monotonic(), cpu_ticks(pids)
    time.sleep(IDLE_SECONDS)
    t1, c1 = time.monotonic(), cpu_ticks(pids)
    return 100.0 * (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0)


def ascii_notes(corpus_dir, count):
    rels = [os.path.relpath(p, corpus_dir) for p in svclib.md_files(corpus_dir)]
    rels = [r for r in rels if r.isascii() and re.fullmatch(r"[A-Za-z0-9/._-]+", r)]
    return rels[:count]


def rewrite(path, text, atomic):
    if atomic:  # what vim (backupcopy=no), VS Code and Obsidian do: a temp file renamed over the note
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def set_watch(config_dir, watch):
    """Writes `watch: false` under every collection of index.yml (or takes it out again)."""
    path = os.path.join(config_dir, "index.yml")
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip() != "watch: false"]
    out = []
    for ln in lines:
        out.append(ln)
        m = re.match(r"^(\s*)gitPull:", ln)
        if m and not watch:
            out.append(f"{m.group(1)}watch: false")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def log_tail(server):
    tail = server.log_tail()
    if tail:
        svclib.log(f"watch: last server log lines:\n{tail}")


class Session:
    """A bench server and its client: `start()` (re)starts both; on the way out the client
    is closed and the server stopped, after logging its last lines if something failed."""

    def __init__(self, server):
        self.server = server
        self.client = None

    def start(self):
        self.stop()
        self.server.start()
        self.client = svclib.Http(self.server.port)
        return self.client

    def stop(self):
        if self.client is not None:
            self.client.close()
            self.client = None
        self.server.stop()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            log_tail(self.server)
        self.stop()
        return False


# ---------------------------------------------------------------- measurements

def measure_edits(client, corpus_dir, collection):
    notes = ascii_notes(corpus_dir, 20)
    originals = {}
    for rel in notes:
        with open(os.path.join(corpus_dir, rel), encoding="utf-8") as f:
            originals[rel] = f.read()
    lat, failures = [], 0
    for i in range(EDIT_PROBES):
        rel = notes[i % len(notes)]
        token = svclib.probe_token(i)
        text = originals[rel] + f"\n\nEdited elsewhere: {token}\n"
        want = doc_uri(collection, rel)
        t0 = time.perf_counter()
        rewrite(os.path.join(corpus_dir, rel), text, atomic=i % 2 == 1)
        found = False
        while time.perf_counter() - t0 < EDIT_TIMEOUT_S:
            if top_hit(client, token) == want:
                found = True
                break
            time.sleep(POLL_S)
        if found:
            lat.append((time.perf_counter() - t0) * 1000.0)
        else:
            failures += 1
    return {
        "edit_searchable_p50_ms": svclib.percentile(lat, 50),
        "edit_searchable_p99_ms": svclib.percentile(lat, 99),
        "edit_searchable_failures": failures,
    }


def measure_burst(client, corpus_dir, collection):
    before = collection_status(client, collection)["documentCount"]
    folder = os.path.join(corpus_dir, "burst")
    os.makedirs(folder)
    # The folder first, so its files come as file events, not as a new folder's scan.
    time.sleep(0.5)
    t0 = time.perf_counter()
    for i in range(BURST_FILES):
        with open(os.path.join(folder, f"burst-{i:03d}.md"), "w", encoding="utf-8") as f:
            f.write(f"# Burst {i}\n\nzqburst{i:03d}\n")
    wait_for("the burst indexed",
             lambda: collection_status(client, collection)["documentCount"] >= before + BURST_FILES, 120, pause=0.05)
    return {"burst_searchable_s": time.perf_counter() - t0}


def make_checkout(out_dir):
    for i in range(CHECKOUT_FILES):
        folder = os.path.join(out_dir, f"pkg{i % CHECKOUT_FOLDERS:02d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file{i:05d}.md"), "w", encoding="utf-8") as f:
            f.write(f"# Checked out {i}\n\nA file of the checkout, number {i}, with the word zqcheckout{i:05d}.\n")


def scans_in_log(server):
    try:
        with open(server.log_path, encoding="utf-8", errors="replace") as f:
            return sum(1 for ln in f if "scan found" in ln)
    except OSError:
        return 0


def measure_checkout(client, server, corpus_dir, collection, query, tmp):
    staging = os.path.join(tmp, "checkout")
    make_checkout(staging)
    before = collection_status(client, collection)["documentCount"]
    scans_before = scans_in_log(server)
    stop, reads = threading.Event(), []
    readers = [threading.Thread(target=svclib.reader_loop,
                                args=(server.port, [("search", "POST", "/api/search", {"query": query})], stop, reads))
               for _ in range(CHECKOUT_READERS)]
    for t in readers:
        t.start()
    try:
        t0 = time.perf_counter()
        subprocess.run(["cp", "-r", staging, os.path.join(corpus_dir, "checkout")], check=True)
        copied = time.perf_counter() - t0
        last = f"zqcheckout{CHECKOUT_FILES - 1:05d}"
        wait_for("the checkout indexed",
                 lambda: collection_status(client, collection)["documentCount"] >= before + CHECKOUT_FILES
                 and top_hit(client, last) is not None,
                 CHECKOUT_TIMEOUT_S, pause=0.05)
        done = time.perf_counter() - t0
    finally:
        stop.set()
        for t in readers:
            t.join()
    lat = [ms for _, start, ms, code in reads if code == 200 and start >= t0 and start <= t0 + done]
    errors = sum(1 for _, start, _, code in reads if code != 200 and start >= t0)
    return {
        "checkout_files": CHECKOUT_FILES,
        "checkout_copy_s": copied,
        "checkout_searchable_s": done,
        "checkout_search_p50_ms": svclib.percentile(lat, 50),
        "checkout_search_p99_ms": svclib.percentile(lat, 99),
        "checkout_search_errors": errors,
        "checkout_scans": scans_in_log(server) - scans_before,
    }


def change_while_stopped(corpus_dir):
    """Edits one note, adds one, deletes one; returns the words that must become searchable."""
    notes = ascii_notes(corpus_dir, 3)
    edited, deleted = notes[0], notes[1]
    with open(os.path.join(corpus_dir, edited), "a", encoding="utf-8") as f:
        f.write("\n\nChanged while svc was stopped: zqwhilestoppededit\n")
    with open(os.path.join(corpus_dir, "added-while-stopped.md"), "w", encoding="utf-8") as f:
        f.write("# Added while stopped\n\nzqwhilestoppedadd\n")
    os.remove(os.path.join(corpus_dir, deleted))
    return {"zqwhilestoppededit": edited, "zqwhilestoppedadd": "added-while-stopped.md"}, deleted


def measure_startup(args, tmp):
    corpus_dir = os.path.join(tmp, "corpus", "watch-startup")
    svclib.log(f"watch: generating {STARTUP_NOTES} notes")
    svclib.make_notes(corpus_dir, STARTUP_NOTES)
    res = {"startup_notes": len(svclib.md_files(corpus_dir)),
           "watch_dirs": sum(1 for _ in os.walk(corpus_dir))}
    server = svclib.Server(args.bin, tempfile.mkdtemp(prefix="svc-watch-startup-", dir=tmp))
    with Session(server) as session:
        client = session.start()
        svclib.log(f"watch: first index of {res['startup_notes']} notes")
        wall, _ = svclib.run_job(client, "/api/collections", {"path": corpus_dir, "name": "big"}, args.job_timeout)
        res["startup_first_index_s"] = wall
        session.stop()

        words, deleted = change_while_stopped(corpus_dir)
        svclib.log("watch: restart with 3 changes made while stopped")
        t0 = time.perf_counter()
        client = session.start()
        res["startup_healthy_s"] = time.perf_counter() - t0
        wait_for("watching after start",
                 lambda: (collection_status(client, "big") or {}).get("watch", {}).get("state") == "watching",
                 STARTUP_TIMEOUT_S)
        res["startup_watching_s"] = time.perf_counter() - t0
        gone = doc_uri("big", deleted)
        wait_for("changes made while stopped",
                 lambda: all(top_hit(client, w) == doc_uri("big", rel) for w, rel in words.items())
                 and client.request("GET", "/api/doc?uri=" + urllib.parse.quote(gone, safe=""))[0] == 404,
                 STARTUP_TIMEOUT_S)
        res["startup_caught_up_s"] = time.perf_counter() - t0
        time.sleep(2)  # let the scan's last writes settle
        res["idle_cpu_pct"] = idle_cpu_pct(server)
        res["worker_rss_watching_mb"] = svclib.rss_mb(server.processes().get("worker"))
        session.stop()

        svclib.log("watch: restart with watch: false (for the watcher's share of memory and CPU)")
        set_watch(os.path.join(server.root, "config"), False)
        client = session.start()
        wait_for("unwatched start", lambda: (collection_status(client, "big") or {}).get("watch", {}).get("state") == "off",
                 STARTUP_TIMEOUT_S)
        time.sleep(2)
        res["idle_cpu_unwatched_pct"] = idle_cpu_pct(server)
        res["worker_rss_unwatched_mb"] = svclib.rss_mb(server.processes().get("worker"))
        # The watched start ran a reconciling scan; the same scan by hand, for a fair comparison.
        svclib.run_job(client, "/api/sync", {}, args.job_timeout)
        time.sleep(2)
        res["worker_rss_unwatched_synced_mb"] = svclib.rss_mb(server.processes().get("worker"))
        return res


def bench_watch(args, tmp):
    corpus_dir = os.path.join(tmp, "corpus", "watch-notes")
    svclib.log("watch: generating the 2,000-note corpus")
    queries = svclib.notes_corpus(corpus_dir)
    server = svclib.Server(args.bin, tempfile.mkdtemp(prefix="svc-watch-", dir=tmp))
    res = {}
    with Session(server) as session:
        client = session.start()
        svclib.run_job(client, "/api/collections", {"path": corpus_dir, "name": "notes"}, args.job_timeout)
        wait_for("watching", lambda: collection_status(client, "notes")["watch"]["state"] == "watching", 30)
        svclib.log(f"watch: {EDIT_PROBES} edits on disk -> searchable")
        res.update(measure_edits(client, corpus_dir, "notes"))
        svclib.log(f"watch: a burst of {BURST_FILES} new notes")
        res.update(measure_burst(client, corpus_dir, "notes"))
        svclib.log(f"watch: a checkout of {CHECKOUT_FILES} files")
        res.update(measure_checkout(client, server, corpus_dir, "notes", queries[0], tmp))
    res.update(measure_startup(args, tmp))
    return res


def print_table(res):
    lines = [(label, svclib.fmt(f, res.get(key)), target) for key, label, f, target, _ in ROWS]
    widths = [max(len(r[i]) for r in lines + [("live index", "value", "target")]) for i in range(3)]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(("live index", "value", "target"), widths)).rstrip())
    print("-+-".join("-" * w for w in widths))
    for label, value, target in lines:
        print(f"{label.ljust(widths[0])} | {value.rjust(widths[1])} | {target}".rstrip())
    missed = [f"{label} = {res[key]:.3g} > {limit:g}" for key, label, _, _, limit in ROWS
              if limit is not None and res.get(key) is not None and res[key] > limit]
    print("live index targets missed: " + ("; ".join(missed) if missed else "none"))


if __name__ == "__main__":
    sys.exit("run through scripts/bench --corpus watch")
