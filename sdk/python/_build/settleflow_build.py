"""A PEP 517 / PEP 660 build backend for settleflow, standard library only.

pip builds packages in an isolated environment into which it installs the
backend's requirements; with setuptools as the backend, ``pip install
./sdk/python`` would need a package index. This backend requires nothing
(``requires = []``), so the package installs on a machine with no index.

It builds a pure-Python wheel of the ``settleflow`` package (every ``.py``
file and ``py.typed``), an sdist that can build that wheel again, and an
editable wheel (a ``.pth`` file pointing at this directory). The metadata is
read from ``pyproject.toml``'s ``[project]`` table (a small reader of the
simple ``key = "value"`` and ``key = ["…"]`` lines used there, since
``tomllib`` exists only from Python 3.11), the version from
``settleflow/_version.py``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "settleflow"
# Files of an sdist besides the package: what is needed to build the wheel again.
SDIST_FILES = ["pyproject.toml", "README.md", "_build/settleflow_build.py"]
# A fixed timestamp (or SOURCE_DATE_EPOCH) makes the archives reproducible.
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, the zip format's earliest


def _project() -> Dict[str, object]:
    """The [project] table of pyproject.toml: string and string-list values only."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    out: Dict[str, object] = {}
    section = None
    for line in lines:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("["):
            section = s.strip("[]").strip()
            continue
        if section != "project":
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.+)$', s)
        if not m:
            raise ValueError(f"pyproject.toml: cannot read line {line!r}")
        key, value = m.group(1), m.group(2).strip()
        if value.startswith('"'):
            out[key] = _string(value)
        elif value.startswith("["):
            out[key] = [_string(x.strip()) for x in _split_list(value)]
        else:
            raise ValueError(f"pyproject.toml: unsupported value for {key}: {value!r}")
    return out


def _string(v: str) -> str:
    m = re.match(r'^"((?:[^"\\]|\\.)*)"\s*(#.*)?$', v)
    if not m:
        raise ValueError(f"pyproject.toml: not a simple string: {v!r}")
    return m.group(1).encode("utf-8").decode("unicode_escape") if "\\" in m.group(1) else m.group(1)


def _split_list(v: str) -> List[str]:
    inner = v.strip()
    if not inner.endswith("]"):
        raise ValueError(f"pyproject.toml: lists must be on one line: {v!r}")
    inner = inner[1:-1].strip()
    return [x for x in re.findall(r'"(?:[^"\\]|\\.)*"', inner)]


def _version() -> str:
    with open(os.path.join(ROOT, PACKAGE, "_version.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__\s*=\s*"([^"]+)"', f.read(), re.M)
    if not m:
        raise ValueError("settleflow/_version.py has no __version__")
    return m.group(1)


def _names() -> Tuple[str, str]:
    p = _project()
    name = str(p["name"])
    return name, _version()


def _dist_info(name: str, version: str) -> str:
    return f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"


def _metadata() -> str:
    p = _project()
    name, version = _names()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
    ]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    if "license" in p:
        lines.append(f"License: {p['license']}")
    for kw in p.get("keywords", []) or []:  # type: ignore[union-attr]
        lines.append(f"Keywords: {kw}")
    for c in p.get("classifiers", []) or []:  # type: ignore[union-attr]
        lines.append(f"Classifier: {c}")
    readme = p.get("readme")
    body = ""
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, str(readme)), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _package_files() -> List[str]:
    """The package's files, relative to ROOT, sorted: every .py and py.typed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py") or fn == "py.typed":
                out.append(os.path.relpath(os.path.join(dirpath, fn), ROOT).replace(os.sep, "/"))
    return out


def _read(rel: str) -> bytes:
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def _wheel_text() -> str:
    return "Wheel-Version: 1.0\nGenerator: settleflow_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _write_wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    name, version = _names()
    dist_info = _dist_info(name, version)
    files = files + [
        (f"{dist_info}/METADATA", _metadata().encode("utf-8")),
        (f"{dist_info}/WHEEL", _wheel_text().encode("utf-8")),
        (f"{dist_info}/top_level.txt", (PACKAGE + "\n").encode("utf-8")),
    ]
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode("utf-8")))
    filename = f"{re.sub(r'[-_.]+', '_', name)}-{version}-py3-none-any.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    stamp = time.gmtime(max(EPOCH, 315532800))[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return filename


# ---------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _names()
    dist_info = _dist_info(name, version)
    d = os.path.join(metadata_directory, dist_info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8", newline="\n") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8", newline="\n") as f:
        f.write(_wheel_text())
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, [(rel, _read(rel)) for rel in _package_files()])


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    pth = (ROOT + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", pth)])


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version = _names()
    base = f"{re.sub(r'[-_.]+', '_', name)}-{version}"
    os.makedirs(sdist_directory, exist_ok=True)
    filename = base + ".tar.gz"
    members = [(rel, _read(rel)) for rel in SDIST_FILES + _package_files()]
    members.append(("PKG-INFO", _metadata().encode("utf-8")))
    with open(os.path.join(sdist_directory, filename), "wb") as raw:
        import gzip

        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=EPOCH) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel, data in sorted(members):
                    info = tarfile.TarInfo(f"{base}/{rel}")
                    info.size = len(data)
                    info.mtime = EPOCH
                    info.mode = 0o644
                    info.uname = info.gname = ""
                    tar.addfile(info, io.BytesIO(data))
    return filename
