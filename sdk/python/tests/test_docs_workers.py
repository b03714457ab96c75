"""docs/workers.md, run as a reader would: its products file and commands
start the reference server and make the worker key, and its Python file, in
under 40 lines, takes a workflow from create to Settled through the reader's
own function in a worker. So the page cannot drift from what works."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import List

from . import harness

DOC = os.path.join(harness.repo_root(), "docs", "workers.md")
SERVER = "go run ./examples/server"


def doc() -> str:
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def sh_commands(text: str) -> List[str]:
    """The commands of the page's sh blocks, without their comments."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


class TestDocsWorkers(unittest.TestCase):
    def test_python_file_settles_a_workflow_through_the_readers_function(self) -> None:
        text = doc()
        files = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertEqual(len(files), 1, "docs/workers.md has one Python file")
        code = files[0]
        lines = code.rstrip("\n").split("\n")
        self.assertLess(len(lines), 40, "the Python file is under 40 lines")

        cmds = sh_commands(text)
        start = [c for c in cmds if c.startswith(SERVER + " -")]
        self.assertEqual(len(start), 1, cmds)
        make_key = [c for c in cmds if c.startswith(SERVER + " keys create")]
        self.assertEqual(len(make_key), 1, cmds)
        run = [c for c in cmds if "python3 " in c]
        self.assertEqual(len(run), 1, cmds)

        # The server as the page starts it (on a free port instead of 8443),
        # with the page's products file.
        products = re.findall(r"```json\n(.*?)```", text, re.S)
        self.assertEqual(len(products), 1, "docs/workers.md has one products file")
        tmp = tempfile.mkdtemp(prefix="settleflow-docs-workers-")
        self.addCleanup(shutil.rmtree, tmp, True)
        args = shlex.split(start[0])[len(SERVER.split()):]
        self.assertEqual(args, ["-products", "products.json"])
        args[1] = os.path.join(tmp, "products.json")
        with open(args[1], "w", encoding="utf-8") as f:
            f.write(products[0])
        srv = harness.Server(tuple(args))
        self.addCleanup(srv.stop)
        out = srv._cli(*shlex.split(make_key[0])[len(SERVER.split()):])
        worker_key = next(w for w in out.split() if w.startswith("rk_test_"))

        # The run command: its environment, with the keys the server gave.
        words = shlex.split(run[0])
        env = {k: v for k, v in os.environ.items() if not k.startswith("SETTLEFLOW_")}
        argv = []
        for w in words:
            name, eq, value = w.partition("=")
            if eq and not argv and re.fullmatch(r"[A-Z_]+", name):
                env[name] = value
            else:
                argv.append(w)
        self.assertEqual(env.pop("SETTLEFLOW_API_KEY"), "sk_test_…")
        self.assertEqual(env.pop("SETTLEFLOW_WORKER_KEY"), "rk_test_…")
        self.assertEqual(env.pop("PYTHONPATH"), "sdk/python")
        self.assertEqual(argv[0], "python3")
        env.update(SETTLEFLOW_API_KEY=srv.key, SETTLEFLOW_WORKER_KEY=worker_key, PYTHONPATH=harness.SDK_DIR)

        code = code.replace('"https://127.0.0.1:8443"', repr(srv.base_url)).replace('"settleflow-data/tls/cert.pem"', repr(srv.ca))
        self.assertNotIn("127.0.0.1:8443", code)
        path = os.path.join(srv.tmp, argv[1])
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        r = subprocess.run([sys.executable, "-X", "dev", "-W", "error", path], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + srv.log())

        # What the page says it prints, with the transaction's hash.
        printed = re.search(r"# → (.*)\n#\s+(on chain: 0x)…", text)
        assert printed is not None, "the page shows the output"
        got = r.stdout.splitlines()
        self.assertEqual(got[0], printed.group(1), r.stdout)
        self.assertRegex(got[1], "^" + re.escape(printed.group(2)) + "[0-9a-f]{64}$")


if __name__ == "__main__":
    unittest.main()
