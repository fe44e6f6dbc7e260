#!/usr/bin/env bash
# Builds the manpages-fr corpus: Debian's French manual pages (package manpages-fr), sections 1, 5
# and 8, rendered to plain UTF-8 text as `man` shows them: OUT_DIR/manS/NAME.S.txt.
#   scripts/ask_eval/manpages-fr/build.sh OUT_DIR
# The questions are questions.jsonl beside this script; paths in `sources` are relative to OUT_DIR.
set -euo pipefail
exec bash "$(dirname "$0")/../build_manpages.sh" fr "${1:?usage: build.sh OUT_DIR}"
