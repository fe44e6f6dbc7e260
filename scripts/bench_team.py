#!/usr/bin/env python3
"""Benchmark a team (docs/team.md): two svc members kept in step by one NATS JetStream server.

One `nats-server -js` on a loopback port with its store in a temp dir; members A and B, two
`svc serve` with their own config, data and cache dirs, joined to it through SVC_CLUSTER,
SVC_TEAM and SVC_MEMBER. The generated note corpus (scripts/corpus_gen.py, seed 42) is
written into A's folder and shared from A (`POST /api/collections` with `shared: true`), and
we measure:

  1. A's first index: the add job, from the POST until GET /api/jobs/{id} says it is done
     (and the job's own totalDurationMs);
  2. B's replica: from the same POST until B's `GET /api/docs?collection=...` counts every
     note; its ratio to A's first index (goal: at most 2x);
  3. edit on A -> searchable on B: K times, a new word written into an existing note on A's
     disk (temp file + rename), A's /api/search polled every 5 ms until it returns the note
     (A's own sync, before anything is published), then B's (goals on loopback: p50 <= 150
     ms, p99 <= 500 ms);
  4. each member's RSS (its whole process tree) and nats-server's;
  5. B's `cluster` status at the end (lag must be 0).

With `--vectors CACHE` (a model cache holding the default preset's embedder, as
`scripts/models default --only embed` makes it) it measures instead a new member's replica with
the vectors carried: A (with the embedder) shares the corpus and embeds it, publishing each
note's chunk vectors; then B, a new member with the same embedder, joins, and we time B from
its start until it holds every note with every note embedded (goal: at most 2x A's first
index, and no embedding run on B: every content's vectors taken from the stream).

Python standard library only. Nothing is built here: pass --bin or build the release binary.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from svclib import (  # noqa: E402
    REPO, STOP_TIMEOUT_S, Http, Server, descendants, file_tail, fmt, free_port, job_seconds, log, make_notes, percentile,
    probe_token, rss_mb, run_job, start_job,
)

COLLECTION = "team"
TEAM = "bench"
NATS_LISTEN_TIMEOUT_S = 15
CONNECT_TIMEOUT_S = 30  # both members report cluster.connected
INDEX_TIMEOUT_S = 900  # A's first index and B's full replica
EDIT_TIMEOUT_S = 10.0  # one edit not searchable on B by then is a failure
EDIT_POLL_S = 0.005
CATCH_UP_TIMEOUT_S = 30  # B's lag back to 0 at the end
POLL_S = 0.02
SMALL_NOTE_BYTES = 20_000  # edits go to ordinary notes, not the corpus's ~50 KB ones

# (key, label, format, goal text, check) — rows of the printed table; check(value) -> bool.
NOTES_ROW = ("notes", "notes in A's folder", "{:d}", "", None)
MEMORY_ROWS = [
    ("a_rss_mb", "A RSS, process tree (MB)", "{:.1f}", "", None),
    ("b_rss_mb", "B RSS, process tree (MB)", "{:.1f}", "", None),
    ("nats_rss_mb", "nats-server RSS (MB)", "{:.1f}", "", None),
]
ROWS = [
    NOTES_ROW,
    ("a_documents", "documents on A after the add", "{:d}", "", None),
    ("first_index_wall_s", "A first index, POST to job done (s)", "{:.2f}", "", None),
    ("first_index_job_s", "A first index, job totalDurationMs (s)", "{:.2f}", "", None),
    ("replica_first_doc_s", "B first replica document, from the POST (s)", "{:.2f}", "", None),
    ("replica_complete_s", "B replica holds every note, from the POST (s)", "{:.2f}", "", None),
    ("replica_ratio", "B replica / A first index", "{:.2f}", "<= 2", lambda v: v <= 2.0),
    ("edit_local_p50_ms", "edit on A -> searchable on A p50 (ms)", "{:.1f}", "", None),
    ("edit_searchable_p50_ms", "edit on A -> searchable on B p50 (ms)", "{:.1f}", "<= 150 ms", lambda v: v <= 150.0),
    ("edit_searchable_p99_ms", "edit on A -> searchable on B p99 (ms)", "{:.1f}", "<= 500 ms", lambda v: v <= 500.0),
    ("edit_searchable_max_ms", "edit on A -> searchable on B max (ms)", "{:.1f}", "", None),
    ("edit_failures", f"edits not searchable on B within {EDIT_TIMEOUT_S:g} s", "{:d}", "0", lambda v: v == 0),
    *MEMORY_ROWS,
    ("b_stream_seq", "B cluster.streamSeq", "{:d}", "", None),
    ("b_applied_seq", "B cluster.appliedSeq", "{:d}", "", None),
    ("b_lag", "B cluster.lag", "{:d}", "0", lambda v: v == 0),
]

# The rows of --vectors.
VECTOR_ROWS = [
    NOTES_ROW,
    ("first_index_wall_s", "A first index, POST to job done (s)", "{:.2f}", "", None),
    ("a_embedded_s", "A every note embedded and its vectors sent, from the POST (s)", "{:.1f}", "", None),
    ("a_chunks", "A totalChunks", "{:d}", "", None),
    ("a_vectors_sent", "A cluster.vectorsSent (documents)", "{:d}", "", None),
    ("b_replica_s", "B holds every note, from its start (s)", "{:.2f}", "", None),
    ("b_replica_vectors_s", "B holds every note embedded, from its start (s)", "{:.2f}", "", None),
    ("b_replica_vectors_ratio", "B replica with vectors / A first index", "{:.2f}", "<= 2", lambda v: v <= 2.0),
    ("b_vectors_received", "B cluster.vectorsReceived (contents)", "{:d}", "", None),
    ("b_embedded", "B embeddedCount", "{:d}", "", None),
    ("b_embedded_itself", "contents B embedded itself (embedded - received)", "{:d}", "0", lambda v: v <= 0),
    *MEMORY_ROWS,
]
EMBED_TIMEOUT_S = 4 * 3600  # A embedding the corpus on 2 cores


# ---------------------------------------------------------------- processes


class Nats:
    """One `nats-server` with JetStream on a free loopback port, its store in `root`."""

    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.port = None
        self.proc = None
        self.log_path = os.path.join(root, "nats.log")

    def url(self):
        """The client URL members are given in SVC_CLUSTER."""
        return f"nats://127.0.0.1:{self.port}"

    def start(self):
        """Starts the server and waits (bounded) until its client port accepts connections."""
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        cmd = [self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", os.path.join(self.root, "js")]
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + NATS_LISTEN_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not listen on {self.port} within {NATS_LISTEN_TIMEOUT_S} s\n"
                                   f"{self.log_tail()}")
            time.sleep(POLL_S)

    def log_tail(self, n=20):
        """The last lines of the server's log."""
        return file_tail(self.log_path, n)

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log(f"nats-server did not stop within {STOP_TIMEOUT_S} s after SIGTERM; sending SIGKILL")
            self.proc.kill()
            self.proc.wait()


class Member(Server):
    """`svc serve` joined to the team: svclib's Server with the cluster's variables and
    SVC_LOG=warn (or $BENCH_TEAM_LOG, an SVC_LOG filter) added to its environment."""

    def __init__(self, binary, root, name, cluster_url, cache=None):
        super().__init__(binary, root, cache)
        self.name = name
        self.cluster_url = cluster_url

    def env(self):
        """Private config, data and cache dirs (svclib), plus the team's variables."""
        env = super().env()
        env.update({"SVC_CLUSTER": self.cluster_url, "SVC_TEAM": TEAM, "SVC_MEMBER": self.name,
                    "SVC_LOG": os.environ.get("BENCH_TEAM_LOG", "warn")})
        return env


def tree_rss_mb(root_pid):
    """RSS of a process and all its descendants (MB), from /proc as svclib reads it; None when
    the process is gone."""
    total = rss_mb(root_pid)
    if total is None:
        return None
    for pid in descendants(root_pid):
        total += rss_mb(pid) or 0.0
    return total


# ---------------------------------------------------------------- API helpers


def cluster_status(client):
    """B's or A's `cluster` object of GET /api/status; None while it has none."""
    status, body = client.request("GET", "/api/status")
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError(f"GET /api/status -> {status}: {body}")
    return body.get("cluster")


def wait_connected(member, client):
    """Waits (bounded) until the member's status says `cluster.connected: true`."""
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    last = None
    while time.monotonic() < deadline:
        last = cluster_status(client)
        if last and last.get("connected") is True:
            return last
        time.sleep(POLL_S * 5)
    if last is None:
        raise RuntimeError(f"member {member.name}: no `cluster` in /api/status after {CONNECT_TIMEOUT_S} s "
                           f"(did the server take SVC_CLUSTER/SVC_TEAM?)\n{member.log_tail()}")
    raise RuntimeError(f"member {member.name}: cluster not connected after {CONNECT_TIMEOUT_S} s: {last}\n"
                       f"{member.log_tail()}")


def doc_count(client, collection):
    """`total` of GET /api/docs?collection=...&limit=1; 0 while the collection is unknown (404)."""
    status, body = client.request("GET", f"/api/docs?collection={urllib.parse.quote(collection)}&limit=1")
    if status == 404:
        return 0
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError(f"GET /api/docs?collection={collection} -> {status}: {body}")
    return int(body.get("total", 0))


def job_state(client, job_id):
    """The job object of GET /api/jobs/{id}."""
    status, job = client.request("GET", f"/api/jobs/{urllib.parse.quote(job_id, safe='')}")
    if status != 200 or not isinstance(job, dict):
        raise RuntimeError(f"GET /api/jobs/{job_id} -> {status}: {job}")
    return job


def doc_uri(collection, rel_path):
    """`svc://<collection>/<relPath>`, each segment percent-encoded as protocol/src/uri.rs does
    (encodeURIComponent's set)."""
    return f"svc://{collection}/" + "/".join(urllib.parse.quote(s, safe="-_.!~*'()") for s in rel_path.split("/"))


# ---------------------------------------------------------------- measurements


def share_and_replicate(client_a, client_b, folder, expected):
    """Shares `folder` from A and polls, in one loop, A's add job until it is no longer
    running and B's document count until it reaches `expected` (A's own count replaces it
    once A's job is done). Times are seconds from the POST."""
    t0 = time.perf_counter()
    job_id = start_job(client_a, "/api/collections",
                       {"path": folder, "name": COLLECTION, "shared": True, "watch": True})
    res = {"first_index_wall_s": None, "replica_first_doc_s": None, "replica_complete_s": None}
    job = None
    target, full_at = expected, None
    deadline = time.monotonic() + INDEX_TIMEOUT_S
    while res["first_index_wall_s"] is None or res["replica_complete_s"] is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"after {INDEX_TIMEOUT_S} s: A's add job "
                               f"{'done' if job is not None else 'still running'}; "
                               f"B holds {doc_count(client_b, COLLECTION)} of {target} documents")
        if res["first_index_wall_s"] is None:
            state = job_state(client_a, job_id)
            if state.get("status") != "running":
                res["first_index_wall_s"] = time.perf_counter() - t0  # as svclib's run_job: after the answer
                job = state
                if state.get("status") != "completed":
                    raise RuntimeError(f"A's add job {job_id} ended {state.get('status')}: {state.get('error')}")
                res["first_index_job_s"] = job_seconds(state)
                res["a_documents"] = doc_count(client_a, COLLECTION)
                if res["a_documents"] != expected:
                    log(f"WARNING A indexed {res['a_documents']} documents of {expected} notes; "
                        f"waiting for B to hold {res['a_documents']}")
                if res["a_documents"] != target:
                    target, full_at = res["a_documents"], None
        if res["replica_complete_s"] is None:
            count = doc_count(client_b, COLLECTION)
            now = time.perf_counter() - t0
            if count > 0 and res["replica_first_doc_s"] is None:
                res["replica_first_doc_s"] = now
            if count >= target and full_at is None:
                full_at = now  # B may be complete before A's job is seen done
            if job is not None and full_at is not None:
                res["replica_complete_s"] = full_at
        time.sleep(POLL_S)
    if res["first_index_wall_s"] > 0:
        res["replica_ratio"] = res["replica_complete_s"] / res["first_index_wall_s"]
    return res


def edit_targets(folder, files, k):
    """K ordinary notes (under SMALL_NOTE_BYTES) spread over the corpus, as relative paths;
    distinct while the corpus has K of them, round robin beyond."""
    small = [f for f in files if os.path.getsize(f) < SMALL_NOTE_BYTES]
    if not small:
        raise RuntimeError(f"no note under {SMALL_NOTE_BYTES} bytes in {folder}")
    step = max(1, len(small) // max(1, k))
    picked = [small[(i * step) % len(small)] for i in range(k)]
    return [os.path.relpath(p, folder).replace(os.sep, "/") for p in picked]


def atomic_append(path, text):
    """Rewrites `path` with `text` appended, as an editor saves: a hidden temp file beside it
    (no `.md` name, so no collection takes it), then a rename over the note. Returns the
    perf_counter time just before the rename."""
    with open(path, encoding="utf-8") as f:
        old = f.read()
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.bench-tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(old + text)
        f.flush()
        os.fsync(f.fileno())
    t0 = time.perf_counter()
    os.replace(tmp, path)
    return t0


def searchable_on(client, word, uri, t0):
    """Polls a member's /api/search for `word` every EDIT_POLL_S until a result is `uri`: ms
    since t0, or None after EDIT_TIMEOUT_S."""
    body = {"query": word, "collection": COLLECTION, "limit": 5}
    while time.perf_counter() - t0 < EDIT_TIMEOUT_S:
        status, payload = client.request("POST", "/api/search", body)
        hits = payload.get("results") if status == 200 and isinstance(payload, dict) else None
        if hits and any(h.get("uri") == uri for h in hits):
            return (time.perf_counter() - t0) * 1000.0
        time.sleep(EDIT_POLL_S)
    return None


def measure_edits(client_a, client_b, folder, files, k):
    """K edits on A's disk, each timed until A's own search returns the note (what A's sync
    took, before anything is published), then until B's does."""
    lat, local, failures = [], [], 0
    for i, rel in enumerate(edit_targets(folder, files, k)):
        word = probe_token(i)
        uri = doc_uri(COLLECTION, rel)
        t0 = atomic_append(os.path.join(folder, rel), f"\nteam edit {i}: {word}\n")
        on_a = searchable_on(client_a, word, uri, t0)
        if on_a is not None:
            local.append(on_a)
        ms = searchable_on(client_b, word, uri, t0)
        if ms is None:
            failures += 1
            log(f"edit {i}: {rel} ({word}) not searchable on B within {EDIT_TIMEOUT_S:g} s")
        else:
            lat.append(ms)
    return {
        "edits": k,
        "edit_local_p50_ms": percentile(local, 50),
        "edit_searchable_p50_ms": percentile(lat, 50),
        "edit_searchable_p99_ms": percentile(lat, 99),
        "edit_searchable_max_ms": max(lat) if lat else None,
        "edit_failures": failures,
        "edit_searchable_ms": lat,
    }


def wait_caught_up(client_b):
    """B's `cluster` once its lag is 0 (bounded by CATCH_UP_TIMEOUT_S); the last one seen otherwise."""
    deadline = time.monotonic() + CATCH_UP_TIMEOUT_S
    last = None
    while time.monotonic() < deadline:
        last = cluster_status(client_b)
        if last and last.get("connected") and last.get("lag") == 0:
            return last
        time.sleep(POLL_S * 5)
    log(f"WARNING B's lag not 0 after {CATCH_UP_TIMEOUT_S} s: {last}")
    return last


def memory(a, b, nats):
    """RSS of each member's process tree and of nats-server (MB)."""
    return {"a_rss_mb": tree_rss_mb(a.proc.pid), "b_rss_mb": tree_rss_mb(b.proc.pid),
            "nats_rss_mb": rss_mb(nats.proc.pid)}


# ---------------------------------------------------------------- run and report


def run(args, tmp):
    """Starts NATS and both members, runs every measurement, stops everything."""
    nats = Nats(args.nats, os.path.join(tmp, "nats"))
    a = Member(args.bin, os.path.join(tmp, "a"), "alpha", "")
    b = Member(args.bin, os.path.join(tmp, "b"), "beta", "")
    clients = []
    try:
        log("starting nats-server")
        nats.start()
        a.cluster_url = b.cluster_url = nats.url()
        for m in (a, b):
            log(f"starting member {m.name}")
            m.start()
        client_a, client_b = Http(a.port), Http(b.port)
        clients = [client_a, client_b]
        wait_connected(a, client_a)
        wait_connected(b, client_b)

        folder = os.path.join(a.root, "team-notes")
        log(f"generating {args.notes} notes in {folder}")
        files = make_notes(folder, count=args.notes)
        res = {"notes": len(files)}
        log("sharing from A: A's first index, B's replica")
        res.update(share_and_replicate(client_a, client_b, folder, len(files)))
        log(f"{args.edits} edits on A's disk -> searchable on B")
        res.update(measure_edits(client_a, client_b, folder, files, args.edits))
        cluster = wait_caught_up(client_b)
        res["b_cluster"] = cluster
        if cluster:
            res["b_stream_seq"], res["b_applied_seq"], res["b_lag"] = (
                cluster.get("streamSeq"), cluster.get("appliedSeq"), cluster.get("lag"))
        res.update(memory(a, b, nats))
        return res
    except Exception:
        log_tails(nats, a, b)
        raise
    finally:
        stop_all(clients, nats, a, b)


def log_tails(nats, *members):
    """The last lines of each member's log and of nats-server's, after a failure."""
    for m in members:
        tail = m.log_tail()
        if tail:
            log(f"last lines of member {m.name}'s log:\n{tail}")
    if nats.log_tail():
        log(f"last lines of nats-server's log:\n{nats.log_tail()}")


def stop_all(clients, nats, *members):
    """Closes the clients, stops the members (the last first), then nats-server."""
    for c in clients:
        c.close()
    for m in reversed(members):
        m.stop()
    nats.stop()


def status_of(client):
    """GET /api/status."""
    status, body = client.request("GET", "/api/status")
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError(f"GET /api/status -> {status}: {body}")
    return body


def collection_counts(status):
    """(documentCount, embeddedCount) of the benchmark's collection in a status, (0, 0) before it exists."""
    for c in status.get("collections", []):
        if c.get("name") == COLLECTION:
            return c.get("documentCount", 0), c.get("embeddedCount", 0)
    return 0, 0


def wait_for(what, check, timeout_s, poll_s=0.25):
    """Polls check() (a value or None) until it gives a value; raises after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got is not None:
            return got
        time.sleep(poll_s)
    raise RuntimeError(f"{what}: not within {timeout_s} s")


def run_vectors(args, tmp):
    """--vectors: A shares and embeds the corpus; then B, a new member, replicates it with the
    vectors carried."""
    nats = Nats(args.nats, os.path.join(tmp, "nats"))
    a = Member(args.bin, os.path.join(tmp, "a"), "alpha", "", cache=args.vectors)
    b = Member(args.bin, os.path.join(tmp, "b"), "beta", "", cache=args.vectors)
    clients = []
    try:
        nats.start()
        a.cluster_url = b.cluster_url = nats.url()
        a.start()
        client_a = Http(a.port)
        clients.append(client_a)
        wait_connected(a, client_a)
        folder = os.path.join(a.root, "team-notes")
        log(f"generating {args.notes} notes in {folder}")
        files = make_notes(folder, count=args.notes)
        res = {"notes": len(files)}
        t0 = time.perf_counter()
        res["first_index_wall_s"], _ = run_job(client_a, "/api/collections",
                                               {"path": folder, "name": COLLECTION, "shared": True, "watch": True},
                                               INDEX_TIMEOUT_S)
        log(f"A indexed {len(files)} notes in {res['first_index_wall_s']:.2f} s; waiting for its embedding")

        def a_done():
            st = status_of(client_a)
            docs, embedded = collection_counts(st)
            sent = (st.get("cluster") or {}).get("vectorsSent", 0)
            if docs and embedded == docs and st.get("embeddingBacklog") == 0 and sent >= docs:
                return st
            return None
        st = wait_for("A embedding every note and sending its vectors", a_done, EMBED_TIMEOUT_S, 2.0)
        res["a_embedded_s"] = time.perf_counter() - t0
        res["a_chunks"] = st.get("totalChunks")
        res["a_vectors_sent"] = st["cluster"].get("vectorsSent")
        docs_a, _ = collection_counts(st)
        log(f"A embedded {res['a_chunks']} chunks in {res['a_embedded_s']:.1f} s; starting the new member B")

        t1 = time.perf_counter()
        b.start()
        client_b = Http(b.port)
        clients.append(client_b)

        def b_holds():
            return time.perf_counter() - t1 if doc_count(client_b, COLLECTION) >= docs_a else None
        res["b_replica_s"] = wait_for("B holding every note", b_holds, INDEX_TIMEOUT_S, POLL_S)

        def b_embedded():
            st = status_of(client_b)
            docs, embedded = collection_counts(st)
            if docs >= docs_a and embedded == docs and st.get("embeddingBacklog") == 0:
                return time.perf_counter() - t1, st
            return None
        res["b_replica_vectors_s"], st_b = wait_for("B holding every note embedded", b_embedded, EMBED_TIMEOUT_S,
                                                    POLL_S)
        res["b_replica_vectors_ratio"] = res["b_replica_vectors_s"] / res["first_index_wall_s"]
        res["b_vectors_received"] = (st_b.get("cluster") or {}).get("vectorsReceived", 0)
        res["b_embedded"] = collection_counts(st_b)[1]
        # Contents: documents of the same bytes share one; B's embeddedCount counts documents.
        res["b_embedded_itself"] = max(0, res["b_embedded"] - res["b_vectors_received"])
        res.update(memory(a, b, nats))
        return res
    except Exception:
        log_tails(nats, a, b)
        raise
    finally:
        stop_all(clients, nats, a, b)


def missed_goals(res, rows=ROWS):
    """The goals of `rows` that the results miss, as text."""
    out = []
    for key, label, _, goal, check in rows:
        if check and res.get(key) is not None and not check(res[key]):
            out.append(f"{label} = {res[key]:.4g} (goal {goal})")
    return out


def print_table(res, rows=ROWS):
    """The results as a metric | value | goal table, and the goals missed."""
    lines = [[label, fmt(f, res.get(key)), goal] for key, label, f, goal, _ in rows]
    header = ["metric", "value", "goal"]
    widths = [max(len(r[i]) for r in [header] + lines) for i in range(3)]
    for cells in [header, ["-" * w for w in widths]] + lines:
        print(f"{cells[0].ljust(widths[0])} | {cells[1].rjust(widths[1])} | {cells[2]}".rstrip())
    missed = missed_goals(res, rows)
    print("goals missed: " + ("; ".join(missed) if missed else "none"))


def parse_args():
    """Command-line arguments; --bin defaults as scripts/bench.py's does."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target_dir = os.path.join(REPO, os.environ.get("CARGO_TARGET_DIR") or "target")  # an absolute value wins
    ap.add_argument("--bin", default=os.path.join(target_dir, "release", "svc"),
                    help="the svc binary (default: $CARGO_TARGET_DIR/release/svc, else target/release/svc)")
    ap.add_argument("--notes", type=int, default=2000, help="generated notes shared from A (default 2000)")
    ap.add_argument("--edits", type=int, default=50, help="edits on A timed until searchable on B (default 50)")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (corpus, stores, logs)")
    ap.add_argument("--vectors", metavar="CACHE",
                    help="a model cache with the default embedder: measure a new member's replica with vectors")
    args = ap.parse_args()
    if args.notes < 1 or args.edits < 1:
        ap.error("--notes and --edits must be at least 1")
    return args


def main():
    """Checks the binaries, runs the benchmark in a temp dir, prints and writes the results."""
    args = parse_args()
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop the processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"binary not found or not executable: {args.bin}")
    args.nats = shutil.which("nats-server") or "/usr/bin/nats-server"
    if not os.access(args.nats, os.X_OK):
        sys.exit("nats-server not found (scripts/team-env installs Debian's package)")
    tmp = tempfile.mkdtemp(prefix="svc-bench-team-")
    error = None
    try:
        res = run_vectors(args, tmp) if args.vectors else run(args, tmp)
    except Exception as e:  # the processes are stopped by now (run's finally)
        traceback.print_exc()
        error = str(e)
        res = {"error": error}
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    rows = VECTOR_ROWS if args.vectors else ROWS
    if error is None:
        print_table(res, rows)
    if args.json:
        meta = {"bin": args.bin, "nats": args.nats, "notes": args.notes, "edits": args.edits,
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count()}
        goals = {key: goal for key, _, _, goal, check in rows if check}
        with open(args.json, "w") as f:
            json.dump({"results": res, "goals": goals, "meta": meta}, f, indent=2)
            f.write("\n")
    if error is not None:
        sys.exit(f"bench_team failed: {error}")
    if args.vectors:
        if missed_goals(res, rows):
            sys.exit("bench_team --vectors: goals missed (see the table)")
    elif res.get("edit_failures") or res.get("b_lag") != 0:
        sys.exit("bench_team: edits were lost or B did not catch up (see the table)")


if __name__ == "__main__":
    main()
