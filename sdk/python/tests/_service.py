"""Starts the real service for the tests: `cauri serve` on 127.0.0.1 with a
temporary SQLite database, and a workspace made by `cauri workspace create`
on the same database. Only the processes started here are stopped, by
their PID."""

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SDK_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(SDK_DIR))
sys.path.insert(0, os.path.join(SDK_DIR, "src"))

_build_lock = threading.Lock()
_built: Optional[str] = None


def binary() -> str:
    """$CAURI_BIN, or cmd/cauri built once into a temporary folder."""
    global _built
    env = os.environ.get("CAURI_BIN")
    if env:
        return env
    with _build_lock:
        if _built is None:
            d = tempfile.mkdtemp(prefix="cauri-py-bin-")
            atexit.register(shutil.rmtree, d, True)
            out = os.path.join(d, "cauri")
            subprocess.run(["go", "build", "-o", out, "./cmd/cauri"], cwd=REPO, check=True, timeout=600)
            _built = out
    return _built


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Service:
    def __init__(self, name: str = "Boutique Test") -> None:
        self.dir = tempfile.mkdtemp(prefix="cauri-py-")
        self.port = free_port()
        self.base_url = "http://127.0.0.1:%d" % self.port
        self.env = dict(os.environ)
        for k in list(self.env):
            if k.startswith("CAURI_") and k not in ("CAURI_BIN", "CAURI_SDK_VECTORS"):
                del self.env[k]
        self.env.update(
            {
                "CAURI_ADDR": "127.0.0.1:%d" % self.port,
                "CAURI_BASE_URL": self.base_url,
                "CAURI_DATABASE_URL": os.path.join(self.dir, "cauri.db"),
                "CAURI_WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8",
                "CAURI_LOG_LEVEL": "warn",
            }
        )
        self.log = open(os.path.join(self.dir, "serve.log"), "wb")
        self.proc: Optional[subprocess.Popen] = subprocess.Popen(  # type: ignore[type-arg]
            [binary(), "serve"], env=self.env, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir
        )
        atexit.register(self.stop)
        try:
            self._wait_healthy(20)
            out = subprocess.run(
                [binary(), "workspace", "create", "--name", name],
                env=self.env, cwd=self.dir, capture_output=True, timeout=30, check=True,
            )
            self.workspace = json.loads(out.stdout)
        except BaseException:
            self.stop()
            raise
        self.keys: Dict[str, str] = self.workspace["keys"]

    def _wait_healthy(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("cauri serve exited: %s" % self.logs())
            try:
                with urllib.request.urlopen(self.base_url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("cauri serve not healthy after %ss: %s" % (seconds, self.logs()))

    def logs(self) -> str:
        try:
            with open(os.path.join(self.dir, "serve.log"), "rb") as f:
                return f.read()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is not None:
            if p.poll() is None:
                p.terminate()  # SIGTERM to this PID only
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)
            self.log.close()
            shutil.rmtree(self.dir, ignore_errors=True)


_shared: Optional[Service] = None
_shared_lock = threading.Lock()


def shared() -> Service:
    """One service for every test module of this run (stopped at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Service()
    return _shared
