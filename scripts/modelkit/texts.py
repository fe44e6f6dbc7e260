"""Real text in many languages for checking an embedder: paragraphs of this machine's translated
manual pages (/usr/share/man/<language>/, Debian's manpages-de, -fr, -es, -ru, -ja, -zh and
what other packages install), with the roff markup taken out. Nothing here is written by us."""
from __future__ import annotations

import gzip
import re
from pathlib import Path

MAN_ROOT = Path("/usr/share/man")
_ESCAPE = re.compile(r"\\f[BIRP]|\\f\[[A-Z]*\]|\\\(..|\\[-&e|^ ]|\\\*\(?..|\\s[-+]?\d")


def _paragraphs(source: str) -> list[str]:
    """The running text of one roff page, paragraph by paragraph."""
    out, lines = [], []
    for raw in source.splitlines():
        if raw.startswith((".", "'")) or raw.startswith('\\"'):
            if raw[1:3] in ("PP", "SH", "SS", "TP", "IP", "LP", "P", "HP") or raw.startswith(".P"):
                if lines:
                    out.append(" ".join(lines))
                lines = []
            continue
        text = _ESCAPE.sub("", raw).replace("\\", "").strip()
        if text:
            lines.append(text)
    if lines:
        out.append(" ".join(lines))
    return out


def manual_page_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def languages(root: Path = MAN_ROOT) -> list[str]:
    """The language folders of the manual, largest first (man1…man9 are the English pages)."""
    langs = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith("man")] if root.is_dir() else []
    return [d.name for d in sorted(langs, key=lambda d: (-sum(1 for _ in d.rglob("*.gz")), d.name))]


def sample(n: int, min_chars: int = 40, max_chars: int = 1200, root: Path = MAN_ROOT) -> list[tuple[str, str]]:
    """Up to `n` (language, paragraph) pairs, taken in turn from each language, in a fixed order."""
    pools: dict[str, list[str]] = {}
    for lang in languages(root) + ["en"]:
        folder = root / lang if lang != "en" else root / "man1"
        paragraphs = []
        for page in sorted(folder.rglob("*.gz"))[:200]:
            try:
                paragraphs += [p for p in _paragraphs(manual_page_text(page)) if min_chars <= len(p) <= max_chars]
            except (OSError, EOFError, ValueError):
                continue
            if len(paragraphs) >= n:
                break
        if paragraphs:
            pools[lang] = paragraphs
    out: list[tuple[str, str]] = []
    depth = 0
    while len(out) < n and any(depth < len(p) for p in pools.values()):
        for lang, paragraphs in pools.items():
            if depth < len(paragraphs) and len(out) < n:
                out.append((lang, paragraphs[depth * 7 % len(paragraphs)]))
        depth += 1
    return out
