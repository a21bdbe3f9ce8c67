"""Test hosts for bridged runs: a Linux network namespace holding a TAP device
with the project's own address, made with iproute2 and always removed again.

    with TestHost() as host:          # needs root (or CAP_NET_ADMIN)
        host.run("ping", "-c", "1", "198.18.0.1")

Nothing here touches the machine's own interfaces: the TAP device lives in the
namespace, and so does everything started with `run` or `popen`.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from typing import Optional


class Refused(Exception):
    """This machine does not let us make a namespace or a TAP device."""


_numbers = itertools.count()


def _ip(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["ip", *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise Refused("the ip program (iproute2) is not installed") from None


class TestHost:
    """A network namespace with one TAP device, up, at `address`, IPv6 off (so the
    kernel sends nothing of its own unless asked)."""

    __test__ = False  # not a pytest test class

    def __init__(self, device: str = "nicsim0", address: str = "198.18.0.2/24", mtu: int = 1500):
        self.device = device
        self.address = address
        self.mtu = mtu
        self.name = f"nicsim-{os.getpid()}-{next(_numbers)}"

    def __enter__(self) -> "TestHost":
        made = _ip("netns", "add", self.name)
        if made.returncode != 0:
            raise Refused(f"cannot make a network namespace: {made.stderr.strip()}")
        try:
            tap = self._in("ip", "tuntap", "add", "dev", self.device, "mode", "tap")
            if tap.returncode != 0:
                raise Refused(f"cannot make a TAP device: {tap.stderr.strip()}")
            for cmd in (
                ["ip", "link", "set", "lo", "up"],
                ["sh", "-c", f"echo 1 > /proc/sys/net/ipv6/conf/{self.device}/disable_ipv6"],
                ["ip", "link", "set", self.device, "mtu", str(self.mtu)],
                ["ip", "addr", "add", self.address, "dev", self.device],
                ["ip", "link", "set", self.device, "up"],
            ):
                done = self._in(*cmd)
                if done.returncode != 0:
                    raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        """End what still runs in the namespace, then delete it; its TAP device goes with it."""
        for pid in _ip("netns", "pids", self.name).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        _ip("netns", "del", self.name)

    def _in(self, *cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.name, *cmd], capture_output=True, text=True)

    def command(self, *cmd: str) -> list:
        """`cmd` as run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *cmd]

    def run(self, *cmd: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run(self.command(*cmd), timeout=timeout, **kw)

    def popen(self, *cmd: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(self.command(*cmd), **kw)

    def start_bridged(self, *cmd: str) -> subprocess.Popen:
        """Start a bridged run (`cmd`, output piped) and return once it holds the TAP device."""
        proc = self.popen(*cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.wait_attached(process=proc)
        return proc

    def attached(self) -> bool:
        """Whether a program holds the TAP device open (the kernel then sees a carrier)."""
        done = self._in("cat", f"/sys/class/net/{self.device}/carrier")
        return done.stdout.strip() == "1"

    def wait_attached(self, timeout: float = 30, process: Optional[subprocess.Popen] = None) -> None:
        end = time.monotonic() + timeout
        while not self.attached():
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"the bridged run ended (exit {process.returncode}) before it opened {self.device}")
            if time.monotonic() > end:
                raise TimeoutError(f"nothing opened {self.device} within {timeout} s")
            time.sleep(0.02)

    def statistics(self) -> dict:
        """The kernel's counters for the TAP device (tx: towards the bridge)."""
        names = ["tx_packets", "tx_dropped", "rx_packets", "rx_dropped"]
        done = self._in("cat", *(f"/sys/class/net/{self.device}/statistics/{n}" for n in names))
        return dict(zip(names, (int(v) for v in done.stdout.split())))
