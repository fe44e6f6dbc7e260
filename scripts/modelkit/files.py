"""File helpers: cache location, hashing and atomic writes (temp file + rename)."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def default_cache_dir() -> Path:
    """Same rule as the server: $SVC_CACHE_DIR, else $XDG_CACHE_HOME/svc, else ~/.cache/svc."""
    if os.environ.get("SVC_CACHE_DIR"):
        return Path(os.environ["SVC_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "svc"
    return Path(os.environ.get("HOME") or "/tmp") / ".cache" / "svc"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _part_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.part")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Writes via a temp file in the same directory, fsync and rename: never a partial file at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = _part_path(path)
    try:
        with open(part, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
