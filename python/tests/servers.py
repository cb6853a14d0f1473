"""Real servers for tests and benchmarks: an XRootD server on a loopback port, and a TCP proxy
that adds a fixed delay to every round trip, as a distant server does.

``xrootd_server(files)`` serves copies of ``files`` from a temporary directory with the
distribution's ``xrootd`` (Debian's ``xrootd-server``), and yields its ``root://`` URL base
and directory. It
refuses to run as root, so as root it runs as the ``xrootd`` user the package creates; it
accepts clients from the loopback address only. ``xrootd_missing()`` says why none can start.

``LatencyProxy(port, delay)`` forwards a loopback port to ``port``, holding every piece of data
``delay / 2`` seconds in each direction: a request and its answer take ``delay`` longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _service_user() -> str | None:
    """The user the server runs as: ``xrootd`` when this process is root, else none (itself)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("xrootd")
    except KeyError:
        return "missing"
    return "xrootd"


def xrootd_missing() -> str | None:
    """Why no XRootD server can start here, or None."""
    if shutil.which("xrootd") is None:
        return "no xrootd server (apt-get install xrootd-server)"
    if _service_user() == "missing":
        return "xrootd refuses to run as root and there is no xrootd user"
    try:
        import fsspec_xrootd  # noqa: F401
    except ImportError:
        return "no fsspec-xrootd (pip install fsspec-xrootd)"
    return None


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"xrootd exited with {process.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"xrootd did not listen on port {port} in {timeout} s")


@dataclasses.dataclass
class XRootDServer:
    """A running server: ``url`` is ``root://127.0.0.1:PORT//`` (a file is ``url + name``),
    ``data`` the directory it serves."""

    url: str
    port: int
    data: Path


@contextlib.contextmanager
def xrootd_server(files: list[Path]) -> Iterator[XRootDServer]:
    """An XRootD server of copies of ``files`` on a free loopback port."""
    why = xrootd_missing()
    if why is not None:
        raise RuntimeError(why)
    user = _service_user()
    with tempfile.TemporaryDirectory(prefix="evtc-xrootd-") as tmp:
        root = Path(tmp)
        data, run = root / "data", root / "run"
        data.mkdir()
        run.mkdir()
        for f in files:
            shutil.copyfile(f, data / Path(f).name)
        port = _free_port()
        config = root / "xrootd.cfg"
        config.write_text(
            f"xrd.port {port}\n"
            "xrd.allow host localhost\n"
            "xrd.allow host 127.0.0.1\n"
            "all.export /\n"
            f"oss.localroot {data}\n"
            f"all.adminpath {run}\n"
            f"all.pidpath {run}\n"
        )
        command = ["xrootd", "-I", "v4", "-c", str(config), "-l", str(run / "log")]
        if user is not None:
            root.chmod(0o755)
            for path in [root, *root.rglob("*")]:
                os.chown(path, pwd.getpwnam(user).pw_uid, -1)
            command = ["runuser", "-u", user, "--", *command]
        process = subprocess.Popen(
            command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        try:
            _wait_for_port(port, process, run / "log")
            yield XRootDServer(f"root://127.0.0.1:{port}//", port, data)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class LatencyProxy:
    """Forwards ``127.0.0.1:self.port`` to ``127.0.0.1:target``, each direction ``delay / 2``
    seconds late, in a process of its own (so that its copying does not take the measured
    process's time); :attr:`bytes_to_client` counts the bytes sent to clients."""

    def __init__(self, target: int, delay: float) -> None:
        import multiprocessing

        self.port = _free_port()
        # Forked: the child runs only this module's asyncio loop (a spawned one would import
        # the caller's main module again).
        context = multiprocessing.get_context("fork")
        self._sent = context.Value("Q", 0, lock=False)
        ready = context.Event()
        self._process = context.Process(
            target=_proxy_main, args=(self.port, target, delay, self._sent, ready), daemon=True
        )
        self._process.start()
        if not ready.wait(20):
            self.close()
            raise RuntimeError("the latency proxy did not start")

    @property
    def bytes_to_client(self) -> int:
        return int(self._sent.value)

    def close(self) -> None:
        self._process.terminate()
        self._process.join(5)

    def __enter__(self) -> LatencyProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _proxy_main(port: int, target: int, delay: float, sent: Any, ready: Any) -> None:
    asyncio.run(_proxy(port, target, delay, sent, ready))


async def _proxy(port: int, target: int, delay: float, sent: Any, ready: Any) -> None:
    loop = asyncio.get_running_loop()
    half = delay / 2

    async def pipe(reader, writer, to_client: bool) -> None:
        queue: asyncio.Queue = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(send())
        try:
            while data := await reader.read(1 << 20):
                if to_client:
                    sent.value += len(data)
                queue.put_nowait((loop.time() + half, data))
        except ConnectionError:
            pass
        queue.put_nowait((0.0, None))
        try:
            await sender
        except ConnectionError:
            pass

    async def client(reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            pipe(reader, up_writer, False), pipe(up_reader, writer, True), return_exceptions=True
        )

    server = await asyncio.start_server(client, "127.0.0.1", port)
    ready.set()
    async with server:
        await server.serve_forever()
