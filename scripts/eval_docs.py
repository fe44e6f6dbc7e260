#!/usr/bin/env python3
"""Answer quality of `POST /api/ask` on real documents nobody here wrote, run by
`scripts/eval --mode ask-docs [--set NAME|DIR]`.

Sets (`--set`):
- `ask-docs` (the default): the Markdown of crates in the cargo registry (README, CHANGELOG, docs)
  at the exact versions of Cargo.lock, so every machine that built svc has the same files. The
  questions (scripts/ask_eval/questions.json) name answer phrases checked by grep against named
  files (scripts/ask_eval/check_questions.py), plus questions the files do not answer.
- `rustdocs`: ../shared/datasets/rustdocs-ask (597 HTML pages of eight books of the Rust
  toolchain's documentation, built by its build.sh; 60 questions written by someone who never ran
  svc).
- any other folder holding `build.sh OUT_DIR` and `questions.jsonl` in the rustdocs-ask form
  (`sources` relative to OUT_DIR, `unanswerable`).
One index is built and embedded once, by the first preset's embedder (`--presets multilingual`
for the manual-page sets; the presets after it should share that embedder, as fast, small and
default do); then, per preset (POST /api/presets, no restart), every question is asked streamed
(time to the first token and to the answer) and in verified mode.
Before the answers, `POST /api/query` with each question as typed gives recall@5: the share of
answerable questions with a right file in the top 5. Every answerable question not answered
right is put down to the stage that lost it (`lost`): retrieval (no right file among the results
the answer could draw on), selection (a right file among them, not chosen as a source),
generation (a right file chosen, the draft does not hold an answer phrase) or grounding (the
draft held one and was withheld). Reported per preset:
- correct: an answer phrase is in the answer and the answer is not a decline (answerable questions;
  a decline that quotes the withheld draft is a decline, see `is_decline`);
- cites the right file: a citation names one of the question's files;
- loop cut / failed: the answer ended at a repetition (finishReason) / no 200;
- unanswerable declined (raw): svc withheld its draft, generated no answer, or the answer says the
  notes do not say;
- answerable withheld (raw): answerable questions whose draft svc withheld (`meta.declined`);
- abstained (verified) on unanswerable questions; verified-and-correct and verified-but-wrong (a
  verified reply that declines is neither);
`--rescore FILE` scores the replies a run saved with `--answers FILE` again, without a server.
- p50/p90 seconds to the answer and to the first streamed token.
Python standard library only.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from eval_ask import serve_collection  # noqa: E402
from svclib import ask_streamed, request  # noqa: E402

QUESTIONS = os.path.join(SCRIPTS, "ask_eval", "questions.json")
SETS = {"rustdocs": os.path.join(os.path.dirname(SCRIPTS), "..", "shared", "datasets", "rustdocs-ask")}
COLLECTION = "crates"
# The verified layer's similarity threshold (worker/src/answer/verified.rs SUPPORT_SIMILARITY).
SUPPORT_SIMILARITY = 0.6
# What a declining answer says (any of these, case-insensitive).
DECLINES = ("do not say", "does not say", "don't say", "not mention", "no information", "not provided",
            "not specified", "does not specify", "cannot answer", "can't answer", "not stated", "do not contain",
            "does not contain", "not in the sources", "not in the notes", "i don't know", "i do not know",
            "unable to", "no mention", "not enough information", "do not provide", "does not provide")


def abstention_reason(reply):
    """What stopped a verified reply that abstained, read from its claims: no draft (no passage
    held the question), else the check a substantive claim failed, the most decisive one when
    several did: a contradiction, a citation out of the capsule or stale, the words (the
    deterministic checks: coverage, numbers, what the claim adds, the question's subject; no
    similarity computed), the similarity of claim and sentence (below the threshold, when no
    generator judges), the
    generator's ruling (close enough, judged no), or no ruling (uncertain: the judge failed, or
    was not asked because another claim had already failed)."""
    if not reply["meta"].get("answerGenerated"):
        return "no draft"
    claims = reply["verification"]["claims"]["claims"]
    if not claims:
        return "no substantive claim"
    order = ["contradicted", "citation rejected", "words", "similarity", "judge said no", "judge unavailable"]
    # With a judge, the similarity only picks the passage a claim is judged against (stop 82).
    judged = "generator-judge" in (reply["verification"]["semantic"].get("verifierFingerprint") or "")
    found = []
    for c in claims:
        if c["status"] == "supported":
            continue
        if c["status"] == "contradicted":
            found.append("contradicted")
        elif not judged and c["confidence"] is not None and c["confidence"] < SUPPORT_SIMILARITY:
            found.append("similarity")
        elif c["status"] == "uncertain":
            found.append("judge unavailable")
        elif c["confidence"] is None:
            found.append("citation rejected" if c["rejectedCitations"] else "words")
        else:
            found.append("judge said no")
    if found:
        return min(found, key=order.index)
    if reply["verification"]["claims"]["rejectedCitations"]:
        return "citation rejected"
    return "other"


def registry_src():
    found = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/index.crates.io-*")))
    if not found:
        sys.exit("no cargo registry sources under ~/.cargo/registry/src: build svc first (cargo fetch)")
    return found[0]


def load_set(name):
    """(questions with `files`, a function that lays the corpus into a folder and returns its file count)."""
    if name in (None, "", "ask-docs"):
        spec = json.load(open(QUESTIONS))
        return spec["questions"], lambda dest: copy_corpus(spec["corpus"]["globs"], registry_src(), dest)
    root = os.path.abspath(SETS.get(name, name))
    questions = []
    with open(os.path.join(root, "questions.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                q["files"] = q.get("sources") or []
                questions.append(q)

    def build(dest):
        subprocess.run(["bash", os.path.join(root, "build.sh"), dest], check=True, stdout=sys.stderr)
        return sum(len(fs) for _, _, fs in os.walk(dest))
    return questions, build


def copy_corpus(globs, src, dest):
    n = 0
    for pattern in globs:
        for path in glob.glob(os.path.join(src, pattern), recursive=True):
            if os.path.isfile(path) and path.endswith(".md"):
                rel = os.path.relpath(path, src)
                os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
                shutil.copyfile(path, os.path.join(dest, rel))
                n += 1
    return n


def as_read(text):
    """Text as a reader reads it: lower case, without Markdown's code marks ("`8` threads" is
    "8 threads" on the screen)."""
    return text.replace("`", "").lower()


def contains_any(text, phrases):
    low = as_read(text)
    return any(as_read(p) in low for p in phrases)


def cites_file(reply, files):
    return any(names_file(c["uri"], files) for c in reply.get("citations", []))


def pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


def score(questions, raw, verified):
    answerable = [q for q in questions if not q.get("unanswerable")]
    unanswerable = [q for q in questions if q.get("unanswerable")]
    r = {q["id"]: raw[q["id"]] for q in questions}
    v = {q["id"]: verified[q["id"]] for q in questions}
    ok = lambda res: res[0] == 200  # noqa: E731
    answer = lambda res: (res[1].get("answer") or "") if ok(res) else ""  # noqa: E731
    # A decline is a decline whatever it quotes: "the notes do not say (the answer drafted gave
    # 42110)" holds the answer phrase, yet a user reading it was told no.
    correct = [q["id"] for q in answerable if not is_decline(r[q["id"]]) and contains_any(answer(r[q["id"]]), q["answers"])]
    cited = [q["id"] for q in answerable if ok(r[q["id"]]) and cites_file(r[q["id"]][1], q["files"])]
    loops = [qid for qid, res in r.items() if ok(res) and res[1]["meta"].get("finishReason") == "repetition"]
    # A mode left out by --phases has status 0: not asked, not failed.
    failed = [qid for qid, res in list(r.items()) + list(v.items()) if res[0] != 0 and not ok(res)]
    declined = [q["id"] for q in unanswerable if is_decline(r[q["id"]])]
    # Answerable questions whose draft svc withheld as not resting on its sources.
    withheld = [q["id"] for q in answerable if ok(r[q["id"]]) and r[q["id"]][1]["meta"].get("declined")]
    # Vouched for: verified mode answered (did not abstain) and the answer is not a decline.
    is_verified = lambda qid: ok(v[qid]) and not v[qid][1]["meta"]["abstained"] and not is_decline(v[qid])  # noqa: E731
    abstained = [q["id"] for q in unanswerable if ok(v[q["id"]]) and v[q["id"]][1]["meta"]["abstained"]]
    verified_correct = [q["id"] for q in answerable if is_verified(q["id"]) and contains_any(answer(v[q["id"]]), q["answers"])]
    verified_wrong = [q["id"] for q in answerable if is_verified(q["id"]) and not contains_any(answer(v[q["id"]]), q["answers"])]
    verified_wrong += [q["id"] for q in unanswerable if is_verified(q["id"])]
    empty = [qid for qid, res in r.items() if ok(res) and not (res[1].get("answer") or "").strip()]
    # Why verified mode abstained on the answerable questions raw mode got right.
    blocked = {}
    for qid in correct:
        if ok(v[qid]) and v[qid][1]["meta"]["abstained"]:
            blocked.setdefault(abstention_reason(v[qid][1]), []).append(qid)
    lost = {}
    for q in answerable:
        if ok(r[q["id"]]) and q["id"] not in correct:
            lost.setdefault(lost_at(q, r[q["id"]][1]), []).append(q["id"])
    totals = [res[-1] for res in r.values() if ok(res)]
    firsts = [res[2] for res in r.values() if ok(res) and res[2] is not None]
    na, nu = len(answerable), len(unanswerable)
    return {
        "answerable": na, "unanswerable": nu,
        "correct": round(len(correct) / na, 3), "cites_right_file": round(len(cited) / na, 3),
        "loop_cut": len(loops), "failed": len(failed), "empty_replies": len(empty),
        "lost": {stage: len(ids) for stage, ids in sorted(lost.items())},
        "unanswerable_declined_raw": round(len(declined) / nu, 3) if nu else None,
        "answerable_withheld_raw": len(withheld),
        "unanswerable_abstained_verified": round(len(abstained) / nu, 3) if nu else None,
        "verified_and_correct": len(verified_correct), "verified_but_wrong": len(verified_wrong),
        "raw_right_abstained": {reason: len(ids) for reason, ids in sorted(blocked.items())},
        "answer_p50_s": pct(totals, 0.5), "answer_p90_s": pct(totals, 0.9),
        "first_token_p50_s": pct(firsts, 0.5), "first_token_p90_s": pct(firsts, 0.9),
        "ids": {"lost": lost, "empty": empty, "correct": correct, "cited": cited, "withheld": withheld, "declined": declined, "loops": loops, "failed": failed,
                "verified_but_wrong": verified_wrong, "raw_right_abstained": blocked},
    }


def is_decline(res):
    """A 200 reply that tells the user no: svc withheld its draft (`meta.declined`), generated no
    answer, or the answer says the notes do not say (DECLINES), whatever else it quotes."""
    if res[0] != 200:
        return False
    meta = res[1].get("meta") or {}
    if meta.get("declined") or meta.get("answerGenerated") is False:
        return True
    return contains_any(res[1].get("answer") or "", DECLINES)


def rescore(args):
    """Scores the replies a run saved with --answers FILE again (as `score` reads them now),
    without a server: prints the report per preset."""
    questions, _ = load_set(args.set)
    saved = json.load(open(args.rescore))
    reports = {}
    for preset, by_id in saved.items():
        asked = [q for q in questions if q["id"] in by_id]
        def reply(qid, mode):
            body = by_id[qid].get(mode) or {}
            return (200 if body.get("meta") else 0, body, None, 0.0)
        raw = {q["id"]: reply(q["id"], "raw") for q in asked}
        verified = {q["id"]: reply(q["id"], "verified") for q in asked}
        m = score(asked, raw, verified)
        for timed in ("answer_p50_s", "answer_p90_s", "first_token_p50_s", "first_token_p90_s"):
            m.pop(timed)  # the saved replies hold no timings
        reports[preset] = m
    return {"mode": "ask-docs", "set": args.set or "ask-docs", "rescored": args.rescore, "presets": reports}


def recall_at_5(port, questions):
    """The share of answerable questions with a right file in the top 5 of /api/query."""
    answerable = [q for q in questions if not q.get("unanswerable")]
    found = []
    for q in answerable:
        status, body = request(port, "POST", "/api/query", {"query": q["question"], "limit": 5})
        uris = [r["uri"] for r in body.get("results", [])] if status == 200 else []
        if any(names_file(u, q["files"]) for u in uris):
            found.append(q["id"])
    return round(len(found) / len(answerable), 3) if answerable else None


def names_file(uri, files):
    return any(uri.endswith("/" + f) or uri.endswith(f) for f in files)


def lost_at(q, reply):
    """The stage that lost an answerable question not answered right (see the module docs)."""
    meta = reply.get("meta", {})
    context = meta.get("answerContext") or {}
    selected = [s["uri"] for s in context.get("selected", [])]
    pooled = selected + [s["uri"] for s in context.get("dropped", [])]
    if not any(names_file(u, q["files"]) for u in pooled):
        return "retrieval"
    if not any(names_file(u, q["files"]) for u in selected):
        return "selection"
    declined = meta.get("declined") or {}
    if declined and contains_any(declined.get("draft", ""), q["answers"]):
        return "grounding"
    return "generation"


def run(args, binary):
    if getattr(args, "rescore", None):
        return rescore(args)
    questions, lay_corpus = load_set(args.set)
    if args.sample and args.sample < len(questions):
        questions = questions[: args.sample]
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    phases = args.phases.split(",")
    ask_raw, ask_verified = "raw" in phases, "verified" in phases
    tmp = os.path.abspath(args.reuse) if args.reuse else tempfile.mkdtemp(prefix="svc-eval-docs-")
    t_start = time.perf_counter()
    reports, answers = {}, {}
    try:
        md = os.path.join(tmp, COLLECTION)
        files = sum(len(fs) for _, _, fs in os.walk(md)) if args.reuse else lay_corpus(md)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(md) for f in fs)
        print(f"corpus: {files} files, {size / 1e6:.1f} MB", file=sys.stderr)
        t_index = time.perf_counter()
        server = serve_collection(binary, tmp, args.cache, md, preset=presets[0] if presets else None)
        index_s = time.perf_counter() - t_index
        status, st = request(server.port, "GET", "/api/status")
        chunks = sum(c.get("chunkCount", 0) for c in st.get("collections", [])) if status == 200 else None
        print(f"indexed and embedded in {index_s:.0f} s", file=sys.stderr)
        recall5 = recall_at_5(server.port, questions)
        print(f"recall@5 of a right file (/api/query, the question as typed): {recall5}", file=sys.stderr)
        try:
            for preset in presets:
                status, body = request(server.port, "POST", "/api/presets", {"presetId": preset})
                if status != 200:
                    print(f"WARNING: preset {preset}: {status} {body}", file=sys.stderr)
                    continue
                raw, verified = {}, {}
                for q in questions:
                    raw[q["id"]] = (ask_streamed(server.port, {"query": q["question"], "maxAnswerTokens": args.max_answer_tokens})
                                    if ask_raw else (0, {}, None, None, 0.0))
                    if ask_verified:
                        s, rep = request(server.port, "POST", "/api/ask",
                                         {"query": q["question"], "maxAnswerTokens": args.max_answer_tokens, "verify": True})
                        verified[q["id"]] = (s, rep, None, 0.0)
                    else:
                        verified[q["id"]] = (0, {}, None, 0.0)
                    if args.verbose:
                        print(f"[{preset}] {q['id']} {q['question']!r} -> {(raw[q['id']][1].get('answer') or '')[:200]!r}",
                              file=sys.stderr)
                reports[preset] = score(questions, raw, verified)
                answers[preset] = {q["id"]: {"question": q["question"], "expected": q.get("answers"),
                                             "files": q.get("files"), "raw": raw[q["id"]][1],
                                             "verified": verified[q["id"]][1]} for q in questions}
                m = reports[preset]
                m["recall@5"] = recall5
                print(f"preset={preset}: recall@5 {recall5} correct {m['correct']} cites-right-file {m['cites_right_file']} "
                      f"loop-cut {m['loop_cut']} failed {m['failed']} declined(raw) {m['unanswerable_declined_raw']} "
                      f"answerable-withheld(raw) {m['answerable_withheld_raw']} "
                      f"abstained(verified) {m['unanswerable_abstained_verified']} verified-correct {m['verified_and_correct']} "
                      f"verified-wrong {m['verified_but_wrong']} answer p50/p90 {m['answer_p50_s']}/{m['answer_p90_s']} s "
                      f"first token p50/p90 {m['first_token_p50_s']}/{m['first_token_p90_s']} s "
                      f"empty {m['empty_replies']} lost {m['lost']} raw-right abstained {m['raw_right_abstained']}")
        finally:
            server.stop()
    finally:
        if args.answers:
            with open(args.answers, "w") as f:
                json.dump(answers, f, indent=1)
        if args.keep or args.reuse:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return {"mode": "ask-docs", "set": args.set or "ask-docs", "questions": len(questions), "recall@5": recall5, "corpus_files": files, "corpus_bytes": size,
            "chunks": chunks, "index_and_embed_s": round(index_s, 1), "max_answer_tokens": args.max_answer_tokens,
            "presets": reports, "wall_s": round(time.perf_counter() - t_start, 1)}
