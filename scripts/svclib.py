"""What every bench and eval script shares: the `svc serve` harness (start on a free port with
private dirs, readiness, processes, stop), HTTP and JSON, jobs, the streamed ask's events,
`svc` CLI runs, percentiles, process memory and the generated note corpus. Python standard
library only. No script imports another script's module but this one (and corpus_gen,
scifact_to_md): no circles.
"""
import collections
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)

JOB_POLL_S = 0.02
HEALTH_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10


def log(msg):
    print(f"[{os.path.basename(sys.argv[0]).removesuffix('.py')}] {msg}", file=sys.stderr, flush=True)


def percentile(values, p):
    """Linear-interpolated percentile (p in 0..100), as numpy's default."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


class Http:
    """JSON over one persistent (keep-alive) HTTP/1.1 connection."""

    def __init__(self, port, timeout=300):
        self.port = port
        self.timeout = timeout
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if data is not None else {}
        reused = self.conn is not None
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                self.conn.connect()
                self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn.request(method, path, body=data, headers=headers)
            resp = self.conn.getresponse()
            raw = resp.read()
        except (http.client.HTTPException, ConnectionError) as e:
            self.close()
            if not reused:
                raise
            log(f"connection dropped ({e!r}); reconnecting")
            return self.request(method, path, body)  # the server closed an idle keep-alive connection
        if resp.will_close:
            self.close()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
        return resp.status, payload

    def timed(self, method, path, body=None):
        t0 = time.perf_counter()
        status, payload = self.request(method, path, body)
        return (time.perf_counter() - t0) * 1000.0, status, payload


def start_job(client, path, body, conflict_wait_s=120):
    """POST a job-starting request; on 409 (another job running) retry until it is accepted."""
    deadline = time.monotonic() + conflict_wait_s
    while True:
        status, payload = client.request("POST", path, body)
        if status == 409 and time.monotonic() < deadline:
            time.sleep(JOB_POLL_S)
            continue
        if status not in (200, 202) or not isinstance(payload, dict) or "jobId" not in payload:
            raise RuntimeError(f"POST {path} -> {status}: {payload}")
        return payload["jobId"]


def wait_job(client, job_id, timeout_s):
    deadline = time.monotonic() + timeout_s
    while True:
        status, job = client.request("GET", f"/api/jobs/{urllib.parse.quote(job_id, safe='')}")
        if status != 200:
            raise RuntimeError(f"GET /api/jobs/{job_id} -> {status}: {job}")
        if job.get("status") == "completed":
            return job
        if job.get("status") == "failed":
            raise RuntimeError(f"job {job_id} failed: {job.get('error')}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"job {job_id} still {job.get('status')} after {timeout_s} s")
        time.sleep(JOB_POLL_S)


def run_job(client, path, body, timeout_s):
    """Start a job and poll it to completion. Returns (wall seconds, job object)."""
    t0 = time.perf_counter()
    job = wait_job(client, start_job(client, path, body), timeout_s)
    return time.perf_counter() - t0, job


def job_seconds(job):
    ms = (job.get("result") or {}).get("totalDurationMs")
    return None if ms is None else ms / 1000.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_proc(pid, name):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except OSError:
        return None


def file_tail(path, n):
    """The last `n` lines of a log file ("" when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def cmdline(pid):
    raw = read_proc(pid, "cmdline")
    return None if raw is None else raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()


def rss_mb(pid):
    raw = read_proc(pid, "status")
    for line in (raw or b"").decode().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return None


def descendants(root_pid):
    """All descendant pids of root_pid, from the ppid field of /proc/*/stat."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = read_proc(name, "stat")
        if not stat:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state ppid ...
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Server:
    """`svc serve` on a free port with private config and data dirs, and a private model cache
    unless `cache` names one (the evals share the developer's). Ready when `/api/status` says
    `healthy`: the gateway serves and the worker is connected."""

    def __init__(self, binary, root, cache=None):
        self.binary = binary
        self.root = root
        self.cache = cache
        self.port = None
        self.proc = None
        self.log_path = os.path.join(root, "serve.log")

    def env(self):
        env = dict(os.environ)
        for var, sub in (("SVC_CONFIG_DIR", "config"), ("SVC_DATA_DIR", "data"), ("SVC_CACHE_DIR", "cache")):
            env[var] = os.path.join(self.root, sub)
            os.makedirs(env[var], exist_ok=True)
        if self.cache is not None:
            env["SVC_CACHE_DIR"] = self.cache
        return env

    def add_collection(self, folder, name, timeout_s=3600):
        """Adds `folder` as the collection `name` (kept when a reused index has it) and waits
        until every document is indexed and embedded."""
        status, body = request(self.port, "POST", "/api/collections", {"path": folder, "name": name})
        if status not in (202, 409):
            raise RuntimeError(f"adding the collection failed: {status} {body}")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status, s = request(self.port, "GET", "/api/status")
                if status == 200 and s["embeddingBacklog"] == 0 and all(
                        c["documentCount"] > 0 and c["embeddedCount"] == c["documentCount"] for c in s["collections"]):
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the collection was not indexed and embedded within {timeout_s} s")

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        self.port = free_port()
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--port", str(self.port)], env=self.env(),
                stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        # /api/health answers as soon as the gateway serves; /api/status says `healthy`
        # once the worker is connected too.
        url = f"http://127.0.0.1:{self.port}/api/status"
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"svc serve exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200 and json.loads(resp.read()).get("healthy"):
                        return
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no healthy server after {HEALTH_TIMEOUT_S} s\n{self.log_tail()}")
            time.sleep(0.05)

    def processes(self):
        """{"supervisor": pid, "gateway": pid, "worker": pid} for the processes that exist now."""
        procs = {"supervisor": self.proc.pid}
        for pid in descendants(self.proc.pid):
            cmd = cmdline(pid) or ""
            for role in ("gateway", "worker"):
                if f"internal {role}" in cmd:
                    procs.setdefault(role, pid)
        return procs

    def log_tail(self, n=40):
        return file_tail(self.log_path, n)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        kids = [p for p in descendants(self.proc.pid) if "internal" in (cmdline(p) or "")]
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log(f"svc serve did not stop within {STOP_TIMEOUT_S} s after SIGTERM; sending SIGKILL")
            self.proc.kill()
            self.proc.wait()
        for pid in kids:  # children left behind by the supervisor
            if "internal" in (cmdline(pid) or ""):
                log(f"child {pid} still alive after supervisor exit; sending SIGKILL")
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def md_files(root):
    out = []
    for d, _, names in os.walk(root):
        out.extend(os.path.join(d, n) for n in names if n.endswith(".md"))
    return sorted(out)


def reader_loop(port, requests, stop, out):
    client = Http(port)
    try:
        client.request("GET", "/api/health")  # open the connection outside the measurement
        i = 0
        while not stop.is_set():
            kind, method, path, body = requests[i % len(requests)]
            i += 1
            t0 = time.perf_counter()
            try:
                status, _ = client.request(method, path, body)
            except (OSError, http.client.HTTPException):
                status = 0
                client.close()
            out.append((kind, t0, (time.perf_counter() - t0) * 1000.0, status))
    finally:
        client.close()


def probe_token(i):
    """A word that occurs in no other note: letters only, so no tokenizer splits it."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    n, word = int.from_bytes(os.urandom(6), "big"), ""
    for _ in range(9):
        n, r = divmod(n, 26)
        word += letters[r]
    return f"zq{word}{letters[i % 26]}"


def fmt(fmt_str, value):
    if value is None:
        return "-"
    try:
        return fmt_str.format(value)
    except (ValueError, TypeError):
        return str(value)


def request(port, method, path, body=None, timeout=120):
    """One JSON request on its own connection: (status, parsed body)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


Streamed = collections.namedtuple("Streamed", "status reply first_s last_s total_s")


def ask_streamed(port, body, timeout=300):
    """One streamed ask (`Accept: text/event-stream`): the status, the final reply, seconds to
    the first and the last token event (None without one), seconds to the reply."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/ask", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
    t0 = time.perf_counter()
    first = last = None
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            if not r.headers.get("Content-Type", "").startswith("text/event-stream"):
                return Streamed(r.status, json.loads(r.read()), None, None, time.perf_counter() - t0)
            event, reply = None, None
            for raw in r:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                    if event == "token":
                        last = time.perf_counter() - t0
                        first = first if first is not None else last
                elif line.startswith("data:") and event == "answer":
                    reply = json.loads(line[5:].strip())
                    break
                elif line.startswith("data:") and event == "error":
                    return Streamed(500, json.loads(line[5:].strip()), first, last, time.perf_counter() - t0)
            return Streamed(200 if reply else 500, reply or {}, first, last, time.perf_counter() - t0)
    except urllib.error.HTTPError as e:
        return Streamed(e.code, json.loads(e.read() or b"{}"), None, None, time.perf_counter() - t0)


Ran = collections.namedtuple("Ran", "stdout stderr seconds")


def run_svc(binary, env, args, stdin_text=None):
    """`svc ARGS` to its end; exits the script with its stderr's tail when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run([binary] + args, env=env, input=stdin_text, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        sys.exit(f"`svc {' '.join(args[:3])} ...` exited with {proc.returncode}")
    return Ran(proc.stdout, proc.stderr, time.perf_counter() - t0)


def default_cache_dir():
    """svc's model cache: $SVC_CACHE_DIR, else ~/.cache/svc (as the binary resolves it)."""
    if os.environ.get("SVC_CACHE_DIR"):
        return os.environ["SVC_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "svc")


# 30 fixed queries for the generated notes, from common to rare (document frequencies in the
# seed-42 corpus, roughly): ~1,600-1,900 notes / ~200-1,400 notes / ~2-400 notes.
# All are checked to occur in the generated corpus before the server starts.
NOTES_QUERIES = [
    # common single terms
    "index", "query", "search", "rust", "latency", "compaction", "middleware", "carefully",
    "tantivy", "sqlite",
    # mid-frequency phrases (topics and word runs)
    "reciprocal rank fusion", "sourdough bread", "kyoto temples", "marathon training",
    "unicode normalization", "cache invalidation", "snippet generation", "write ahead log",
    "hybrid lexical semantic", "deadline review",
    # rare terms: non-ASCII words, headings, authors, title numbers
    "München", "Zürich", "jalapeño", "東京", "Привет", "Zusammenfassung", "Müller", "backlinks",
    "0042", "1234",
]


def notes_corpus(out_dir):
    """The 2,000 generated notes in `out_dir`, checked to hold every fixed query: the queries."""
    texts = []
    for path in make_notes(out_dir):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read().lower())
    missing = [q for q in NOTES_QUERIES if not any(all(w in t for w in q.lower().split()) for t in texts)]
    if missing:
        raise RuntimeError(f"fixed queries not found in the generated corpus: {missing}")
    return list(NOTES_QUERIES)


def make_notes(out_dir, count=2000, seed=42):
    """The generated note corpus (scripts/corpus_gen.py), deterministic for a count and seed."""
    subprocess.run([sys.executable, os.path.join(SCRIPTS, "corpus_gen.py"), out_dir, str(count), str(seed)],
                   check=True, stdout=subprocess.DEVNULL)
    return md_files(out_dir)
