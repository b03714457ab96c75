"""The package installs with pip into a fresh venv with no package index, and runs from outside the repository."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from .harness import SDK_DIR, repo_root

CHECK = r"""
import importlib.metadata as md, json, os, sys
import settleflow
from settleflow import Settleflow, AuthenticationError, RateLimitError, APIError, SignatureVerificationError
with open(sys.argv[1], encoding="utf-8") as f:
    vectors = json.load(f)
v = vectors["vectors"][0]
ev = settleflow.webhooks.construct(v["body"].encode(), v["headers"][vectors["signatureHeader"]], v["secret"], now=v["now"])
files = [str(f) for f in md.files("settleflow")]
print(json.dumps({
    "file": settleflow.__file__,
    "version": settleflow.__version__,
    "dist_version": md.version("settleflow"),
    "requires_python": md.metadata("settleflow")["Requires-Python"],
    "py_typed": os.path.exists(os.path.join(os.path.dirname(settleflow.__file__), "py.typed")),
    "files": files,
    "workflow_id": ev.data.workflow_id,
    "repr": repr(Settleflow(api_key="sk_test_" + "x" * 40)),
}))
"""


def _bin(venv: str, name: str) -> str:
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin", name)


class TestInstall(unittest.TestCase):
    def test_pip_install_into_a_fresh_venv_offline(self) -> None:
        tmp = tempfile.mkdtemp(prefix="settleflow-install-")
        self.addCleanup(shutil.rmtree, tmp, True)
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=120)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        # No index and no extra wheel directory: the build may not download or find anything.
        env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE=os.devnull)
        r = subprocess.run(
            [_bin(venv, "python"), "-m", "pip", "install", SDK_DIR],
            env=env, capture_output=True, text=True, timeout=300, cwd=tmp,
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # Run from outside the repository, strictly, so nothing is imported from the source tree.
        r = subprocess.run(
            [_bin(venv, "python"), "-X", "dev", "-W", "error", "-c", CHECK, os.path.join(repo_root(), "testdata", "webhooks.json")],
            env=env, capture_output=True, text=True, timeout=60, cwd=tmp,
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        got = json.loads(r.stdout)
        import settleflow

        self.assertTrue(got["file"].startswith(os.path.realpath(venv)) or got["file"].startswith(venv), got["file"])
        self.assertEqual(got["version"], settleflow.__version__)
        self.assertEqual(got["dist_version"], settleflow.__version__)
        self.assertEqual(got["requires_python"], ">=3.9")
        self.assertTrue(got["py_typed"])
        self.assertIn("settleflow/py.typed", got["files"])
        self.assertTrue(got["workflow_id"].startswith("wf_"))
        self.assertNotIn("x" * 40, got["repr"])


class TestBackend(unittest.TestCase):
    def setUp(self) -> None:
        sys.path.insert(0, os.path.join(SDK_DIR, "_build"))
        self.addCleanup(sys.path.remove, os.path.join(SDK_DIR, "_build"))
        import settleflow_build

        self.backend = settleflow_build
        self.tmp = tempfile.mkdtemp(prefix="settleflow-build-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def check_wheel(self, path: str) -> None:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            record = z.read("settleflow-" + self.version() + ".dist-info/RECORD").decode()
            rows = [line.split(",") for line in record.splitlines()]
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for name, digest, size in rows:
                if name.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(name)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), name)
            meta = z.read("settleflow-" + self.version() + ".dist-info/METADATA").decode()
            wheel = z.read("settleflow-" + self.version() + ".dist-info/WHEEL").decode()
        self.assertIn("Root-Is-Purelib: true", wheel)
        self.assertIn("Tag: py3-none-any", wheel)
        self.assertIn("Name: settleflow\n", meta)
        self.assertIn(f"Version: {self.version()}\n", meta)
        for f in os.listdir(os.path.join(SDK_DIR, "settleflow")):
            if f.endswith(".py") or f == "py.typed":
                self.assertIn("settleflow/" + f, names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")])

    def version(self) -> str:
        import settleflow

        return settleflow.__version__

    def test_wheel_and_sdist_round_trip(self) -> None:
        self.assertEqual(self.backend.get_requires_for_build_wheel(), [])
        wheel = self.backend.build_wheel(self.tmp)
        self.assertEqual(wheel, f"settleflow-{self.version()}-py3-none-any.whl")
        self.check_wheel(os.path.join(self.tmp, wheel))
        sdist = self.backend.build_sdist(self.tmp)
        with tarfile.open(os.path.join(self.tmp, sdist)) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(self.tmp, filter="data")
            else:  # pragma: no cover - Python without the extraction filters
                tar.extractall(self.tmp)
        src = os.path.join(self.tmp, f"settleflow-{self.version()}")
        # build the wheel again from the sdist, in a fresh interpreter (the backend locates files from its own path)
        out = os.path.join(self.tmp, "from-sdist")
        code = f"import sys; sys.path.insert(0, {os.path.join(src, '_build')!r}); import settleflow_build as b; print(b.build_wheel({out!r}))"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with zipfile.ZipFile(os.path.join(out, wheel)) as a, zipfile.ZipFile(os.path.join(self.tmp, wheel)) as b:
            self.assertEqual(sorted(a.namelist()), sorted(b.namelist()))
            for n in a.namelist():
                self.assertEqual(a.read(n), b.read(n), n)

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib (to cross-check the backend's TOML reader) is Python 3.11+")
    def test_metadata_matches_pyproject(self) -> None:
        import tomllib

        with open(os.path.join(SDK_DIR, "pyproject.toml"), "rb") as f:
            doc = tomllib.load(f)
        self.assertEqual(doc["build-system"]["requires"], [])
        project = self.backend._project()
        for key, value in doc["project"].items():
            self.assertEqual(project[key], value, key)


if __name__ == "__main__":
    unittest.main()
