#!/usr/bin/env python3
"""Compare this build's benchmark figures with another revision's: A/B ratios with their spread.

A is this checkout's release binary ($CARGO_TARGET_DIR/release/svc, else target/release/svc;
`--bin` names another). B is REV's (`--against REV`): a detached git worktree of REV at
target/against/<sha>/src, built there with CARGO_TARGET_DIR=target/against/<sha>/target after
sourcing this checkout's scripts/build-env, so its build is cached and never touches ours (the
build is skipped when both svc and svc-server exist; the first one is a full build). Or
`--bin-b PATH`: an svc binary already built (svc-server beside it).

scripts/bench.py (this checkout's, for both sides: the same harness measures both binaries) then
runs alternately, A B A B ..., `--runs` times each, with every argument not listed below passed
through (e.g. `--corpus notes`, `--models CACHE`). Every numeric figure of its JSON is compared:
the median of A's runs over the median of B's, the range of the run-by-run ratios, and each
side's min-max. Whether lower or higher is better is read from the figure's name (times, ms,
seconds, bytes, KB/MB, RSS, CPU, errors: lower; rates, per second, tokens/s, QPS, throughput,
recall, nDCG, shares: higher; "?" otherwise). A figure more than 10% worse for A is flagged
WORSE; a "?" figure that moved by more than 10% either way is flagged "changed".

Normally run through `scripts/bench --against REV` (which builds A first). Python standard
library only.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
AGAINST_DIR = os.path.join(REPO, "target", "against")
WORSE_LIMIT = 1.10  # a figure worse than this factor for A is flagged
MIN_RUNS = 3

# Names that say higher is better (checked first: "tok_s" is tokens per second, not seconds).
HIGHER_PATTERNS = [
    r"(^|_)(rate|rates|qps|tps|throughput|recall|ndcg|mrr|share)(_|$)",
    r"(^|_)per_(s|sec|second)(_|$)",
    r"(^|_)per_second(_|$)",
    r"(^|_)(tok|tokens|chunks|docs|files|notes|queries|requests|ops)_s(_|$)",
]
# Names that say lower is better: durations, sizes, memory, CPU, failures.
LOWER_PATTERNS = [
    r"(^|_)(ms|us|ns|s|sec|secs|seconds|time|times|latency|latencies|wall)(_|$)",
    r"(^|_)(bytes|kb|mb|gb|rss|cpu)(_|$)",
    r"(^|_)(errors|failures)(_|$)",
]


def log(msg):
    print(f"[bench_against] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- arguments


def runs_arg(text):
    """argparse type for --runs: an integer of at least MIN_RUNS."""
    n = int(text)
    if n < MIN_RUNS:
        raise argparse.ArgumentTypeError(f"at least {MIN_RUNS} runs per side")
    return n


def parse_args(argv):
    """(our options, the arguments passed through to scripts/bench.py)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
        epilog="Every other argument goes to scripts/bench.py (see `python3 scripts/bench.py --help`); "
               "`--corpus notes` keeps a comparison short.")
    side_b = ap.add_mutually_exclusive_group(required=True)
    side_b.add_argument("--against", metavar="REV", help="the git revision to compare with (B)")
    side_b.add_argument("--bin-b", metavar="PATH", help="compare with this svc binary (svc-server beside it) "
                                                        "instead of building a revision")
    ap.add_argument("--runs", type=runs_arg, default=MIN_RUNS,
                    help=f"bench.py runs per side, alternating A B A B ... (default and minimum {MIN_RUNS})")
    ap.add_argument("--bin", metavar="PATH", help="A's svc binary (default: $CARGO_TARGET_DIR/release/svc, "
                                                  "else target/release/svc)")
    ap.add_argument("--out", metavar="FILE", help="also write the whole comparison as JSON")
    ap.add_argument("--no-build", action="store_true",
                    help="(handled by scripts/bench: A is not rebuilt; REV is still built when its binaries are missing)")
    ap.add_argument("--json", metavar="FILE", help=argparse.SUPPRESS)  # bench.py's, set per run here
    args, passthrough = ap.parse_known_args(argv)
    if args.json:
        ap.error("--json is set for each run; use --out FILE for the comparison")
    return args, passthrough


# ---------------------------------------------------------------- binaries


def git(*cmd, cwd=REPO):
    """The stripped stdout of `git CMD` (exits the script when git fails)."""
    done = subprocess.run(["git", *cmd], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"git {' '.join(cmd)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def default_bin_a():
    """This checkout's release svc, where scripts/bench builds it."""
    target = os.path.join(REPO, os.environ.get("CARGO_TARGET_DIR") or "target")  # an absolute value wins
    return os.path.join(target, "release", "svc")


def describe_checkout():
    """This checkout's HEAD, with "+dirty" when tracked files differ from it."""
    head = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + ("+dirty" if dirty else "")


def check_binary(svc):
    """Exits unless `svc` and the svc-server beside it are executable."""
    for path in (svc, os.path.join(os.path.dirname(svc), "svc-server")):
        if not os.access(path, os.X_OK):
            sys.exit(f"binary not found or not executable: {path}")


def worktree(sha):
    """target/against/<sha>/src: a detached worktree of `sha`, made unless it is already there."""
    src = os.path.join(AGAINST_DIR, sha, "src")
    if os.path.exists(os.path.join(src, ".git")):
        if git("rev-parse", "HEAD", cwd=src) != sha:
            sys.exit(f"{src} is not at {sha}: remove it (`git worktree remove --force {src}`) and run again")
        return src
    git("worktree", "prune")  # forget a worktree whose directory was deleted
    os.makedirs(os.path.dirname(src), exist_ok=True)
    log(f"git worktree add --detach {os.path.relpath(src, REPO)} {sha}")
    git("worktree", "add", "--detach", src, sha)
    return src


def build_rev(rev):
    """REV's release svc, built in its own worktree and target dir unless both binaries exist."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    target = os.path.join(AGAINST_DIR, sha, "target")
    svc = os.path.join(target, "release", "svc")
    if all(os.access(os.path.join(target, "release", b), os.X_OK) for b in ("svc", "svc-server")):
        log(f"B: {rev} = {sha}, built already ({os.path.relpath(svc, REPO)})")
        return svc, sha
    src = worktree(sha)
    log(f"B: building {rev} = {sha} in {os.path.relpath(src, REPO)} (CARGO_TARGET_DIR={os.path.relpath(target, REPO)})")
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    build_env = os.path.join(SCRIPTS, "build-env")  # ours: both builds compile llama.cpp alike
    cmd = f'source "{build_env}" && exec cargo build --release --bin svc --bin svc-server'
    if subprocess.run(["bash", "-c", cmd], cwd=src, env=env).returncode != 0:
        sys.exit(f"building {rev} failed")
    return svc, sha


# ---------------------------------------------------------------- runs


def run_bench(svc, passthrough, tmp, label):
    """One scripts/bench.py run with `svc`: its JSON document. bench.py's own table goes to stderr."""
    out = os.path.join(tmp, f"{label}.json")
    cmd = [sys.executable, os.path.join(SCRIPTS, "bench.py"), *passthrough, "--bin", svc, "--json", out, "--no-build"]
    log(f"run {label}: {' '.join(cmd[1:])}")
    code = subprocess.run(cmd, stdout=sys.stderr).returncode
    if not os.path.exists(out):
        sys.exit(f"run {label}: bench.py exited with {code} and wrote no JSON")
    if code != 0:
        log(f"WARNING run {label}: bench.py exited with {code}; its figures that exist are kept")
    with open(out) as f:
        return json.load(f)


def run_alternately(bin_a, bin_b, passthrough, runs):
    """A B A B ...: ({"A": [flat figures per run], "B": [...]}), each run flattened."""
    flat = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="svc-bench-against-") as tmp:
        for i in range(1, runs + 1):
            for side, svc in (("A", bin_a), ("B", bin_b)):
                doc = run_bench(svc, passthrough, tmp, f"{side}{i}")
                flat[side].append(flatten(doc.get("results", doc)))
    return flat


# ---------------------------------------------------------------- figures


def flatten(value, prefix=""):
    """Numeric leaves of nested dicts and lists as {"dotted.key": number}; booleans, strings and
    nulls are left out."""
    out = {}
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[prefix] = value
        return out
    for key, child in items:
        out.update(flatten(child, f"{prefix}.{key}" if prefix else str(key)))
    return out


def direction(key):
    """"lower" or "higher" (is better) from the figure's name, else "?"."""
    name = key.lower().replace(".", "_").replace("-", "_")
    if any(re.search(p, name) for p in HIGHER_PATTERNS):
        return "higher"
    if any(re.search(p, name) for p in LOWER_PATTERNS):
        return "lower"
    return "?"


def ratio(a, b):
    """a / b, or None when b is 0 (or either is missing)."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def is_worse(better, a, b, limit=WORSE_LIMIT):
    """A more than `limit` times worse than B in the figure's direction (B = 0 counts too)."""
    if a is None or b is None:
        return False
    if better == "lower":
        return a > b * limit if b > 0 else a > 0
    if better == "higher":
        return b > a * limit
    return False


def has_changed(a, b, limit=WORSE_LIMIT):
    """A and B differ by more than `limit` either way (for figures of no known direction)."""
    if a is None or b is None:
        return False
    lo, hi = sorted((abs(a), abs(b)))
    return hi > lo * limit if lo > 0 else hi > 0


def spread(values):
    """(min, max) of the values, or (None, None) without any."""
    return (min(values), max(values)) if values else (None, None)


def compare_figure(key, pairs):
    """One figure's comparison from its (A, B) value of each run pair (None where a run lacks
    it): medians, the ratio of the medians, the run-by-run ratios, each side's spread, the
    direction read from the name and the flag."""
    a_values = [a for a, _ in pairs if a is not None]
    b_values = [b for _, b in pairs if b is not None]
    a_med = statistics.median(a_values) if a_values else None
    b_med = statistics.median(b_values) if b_values else None
    pair_ratios = [r for r in (ratio(a, b) for a, b in pairs) if r is not None]
    better = direction(key)
    if is_worse(better, a_med, b_med):
        flag = "WORSE"
    elif better == "?" and has_changed(a_med, b_med):
        flag = "changed"
    else:
        flag = ""
    (a_min, a_max), (b_min, b_max), (r_min, r_max) = spread(a_values), spread(b_values), spread(pair_ratios)
    return {
        "better": better, "a": a_values, "b": b_values, "a_median": a_med, "b_median": b_med,
        "ratio": ratio(a_med, b_med), "pair_ratios": pair_ratios, "ratio_min": r_min, "ratio_max": r_max,
        "a_min": a_min, "a_max": a_max, "b_min": b_min, "b_max": b_max, "flag": flag,
    }


def compare(a_runs, b_runs):
    """{figure: comparison} over every figure any run has, in the order the runs list them.
    A's run i pairs with B's run i (they ran one after the other)."""
    keys = {}
    for run in a_runs + b_runs:
        keys.update(dict.fromkeys(run))
    return {key: compare_figure(key, [(a.get(key), b.get(key)) for a, b in zip(a_runs, b_runs)]) for key in keys}


# ---------------------------------------------------------------- report


def num(value):
    """A figure for the table: 4 significant digits, whole numbers from 1,000 up, "-" for none."""
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:.4g}"


def span(lo, hi, fmt=num):
    """"lo–hi" for a spread, "-" without values."""
    if lo is None:
        return "-"
    return f"{fmt(lo)}–{fmt(hi)}"


def ratio_text(value):
    return "-" if value is None else f"{value:.3f}"


def table_lines(figures):
    """The comparison table as lines of text: one row per figure, columns aligned."""
    header = ["figure", "better", "A median", "B median", "A/B", "A/B range", "A min–max", "B min–max", "flag"]
    rows = [[key, f["better"], num(f["a_median"]), num(f["b_median"]), ratio_text(f["ratio"]),
             span(f["ratio_min"], f["ratio_max"], ratio_text), span(f["a_min"], f["a_max"]),
             span(f["b_min"], f["b_max"]), f["flag"]]
            for key, f in figures.items()]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]

    def line(cells):
        return " | ".join(c.ljust(w) if i in (0, 1, 8) else c.rjust(w)
                          for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), "-+-".join("-" * w for w in widths)] + [line(r) for r in rows]


def summary_line(figures):
    """One line naming the figures flagged WORSE (the ones that need a reason to be taken)."""
    worse = [f"{k} ({ratio_text(f['ratio'])})" for k, f in figures.items() if f["flag"] == "WORSE"]
    limit = f"{(WORSE_LIMIT - 1) * 100:.0f}%"
    return f"worse by more than {limit} for A: " + ("; ".join(worse) if worse else "none")


def write_json(path, figures, sides, runs, passthrough):
    """The whole comparison: both sides, the runs, the arguments and every figure's numbers."""
    doc = {"a": sides["A"], "b": sides["B"], "runs": runs, "bench_args": passthrough,
           "worse_limit": WORSE_LIMIT, "figures": figures}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


# ---------------------------------------------------------------- main


def main(argv=None):
    args, passthrough = parse_args(sys.argv[1:] if argv is None else argv)
    # SIGTERM unwinds like Ctrl-C, so the temp dir goes and bench.py stops its servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    bin_a = os.path.abspath(args.bin or default_bin_a())
    check_binary(bin_a)
    sides = {"A": {"bin": bin_a, "rev": describe_checkout()}}
    if args.bin_b:
        bin_b = os.path.abspath(args.bin_b)
        check_binary(bin_b)
        sides["B"] = {"bin": bin_b, "rev": None}
    else:
        bin_b, sha = build_rev(args.against)
        check_binary(bin_b)
        sides["B"] = {"bin": bin_b, "rev": sha, "against": args.against}
    log(f"A = {sides['A']['rev']} ({bin_a}); B = {sides['B']['rev'] or bin_b} ({bin_b}); {args.runs} runs each")

    flat = run_alternately(bin_a, bin_b, passthrough, args.runs)
    figures = compare(flat["A"], flat["B"])
    print(f"A: {sides['A']['rev']}  {bin_a}")
    print(f"B: {sides['B']['rev'] or '(binary)'}  {bin_b}")
    print(f"{args.runs} runs each, alternating A B; A/B = median of A / median of B; "
          "A/B range = run-by-run ratios")
    for text in table_lines(figures):
        print(text)
    print(summary_line(figures))
    if args.out:
        write_json(args.out, figures, sides, args.runs, passthrough)


if __name__ == "__main__":
    main()
