#!/usr/bin/env bash
# Renders Debian's translated manual pages of one language to plain UTF-8 text, as `man` shows them.
#   scripts/ask_eval/build_manpages.sh LANG OUT_DIR      (LANG: de or fr)
# Reads /usr/share/man/LANG/man{1,5,8}/*.gz (packages manpages-de / manpages-fr) and writes
# OUT_DIR/manS/NAME.S.txt, one whole page per file: `man -l` (which runs the preprocessors the page
# asks for, e.g. tbl) at 80 columns, without hyphenation or justification so that phrases are not split,
# then `col -bx` to drop overstrikes. Symbolic links (aliases of another page in the same set) are
# skipped, and so are pages that render empty. Sorted, so two runs give the same files.
set -euo pipefail
lang=${1:?usage: build_manpages.sh LANG OUT_DIR}
out=${2:?usage: build_manpages.sh LANG OUT_DIR}
src=/usr/share/man/$lang
case $lang in
  de) pkg=manpages-de ;;
  fr) pkg=manpages-fr ;;
  *) pkg=manpages-$lang ;;
esac
command -v man >/dev/null && command -v groff >/dev/null && command -v col >/dev/null || {
  echo "man, groff or col missing: apt-get install man-db groff-base bsdextrautils" >&2; exit 1; }
if ! ls "$src"/man1/*.gz >/dev/null 2>&1; then
  echo "no manual pages under $src/man1: apt-get install $pkg groff-base" >&2; exit 1
fi
export LANG=C.UTF-8 LC_ALL=C.UTF-8 MANWIDTH=80 MAN_KEEP_FORMATTING= MANPAGER=cat PAGER=cat
written=0 empty=0
mkdir -p "$out"
for sec in 1 5 8; do
  [ -d "$src/man$sec" ] || continue
  mkdir -p "$out/man$sec"
  while IFS= read -r -d '' page; do
    [ -L "$page" ] && continue
    name=$(basename "$page" .gz)
    dest="$out/man$sec/$name.txt"
    man -l --no-hyphenation --no-justification "$page" 2>/dev/null | col -bx > "$dest" || true
    if [ -s "$dest" ] && grep -q '[^[:space:]]' "$dest"; then
      written=$((written + 1))
    else
      rm -f "$dest"; empty=$((empty + 1))
    fi
  done < <(find "$src/man$sec" -maxdepth 1 -name '*.gz' -print0 | sort -z)
done
[ "$written" -gt 0 ] || { echo "rendered no pages from $src: apt-get install $pkg groff-base" >&2; exit 1; }
echo "$written $lang manual pages (man1, man5, man8) in $out ($empty rendered empty, skipped)"
