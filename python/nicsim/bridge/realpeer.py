"""The real Linux side of a bridged run (docs/bridge.md), the standard library and
xxhash (which nicsim depends on) only:

    python -m nicsim.bridge.realpeer server --bind 198.18.0.2 --port 5001
    python -m nicsim.bridge.realpeer client --to 198.18.0.1 --port 5001 --bytes 10000000
    python -m nicsim.bridge.realpeer fuzz --device nicsim0 --frames 10000
    python -m nicsim.bridge.realpeer ping --to 198.18.0.1 --count 3

`server` takes one connection and reads to its end; `client` sends random bytes
and closes. Each prints one JSON line: bytes, XXH128 (as `xxhsum -H2` writes it)
and seconds from connection to the end. `fuzz` writes random and mutated
Ethernet frames to a device with a packet socket and prints how many of each
kind the kernel took and refused. `ping` sends ICMP echo requests from a raw
socket (so no `ping` program is needed) and prints how many were answered.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import sys
import time

import xxhash

CHUNK = 1 << 16


def serve(bind: str, port: int, timeout: float) -> dict:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((bind, port))
        s.listen(1)
        s.settimeout(timeout)
        print(json.dumps({"listening": port}), flush=True)
        conn, _ = s.accept()
        with conn:
            conn.settimeout(timeout)
            start = time.monotonic()
            digest, total = xxhash.xxh3_128(), 0
            while chunk := conn.recv(CHUNK):
                digest.update(chunk)
                total += len(chunk)
            return {"bytes": total, "xxh128": digest.hexdigest(), "seconds": time.monotonic() - start}


def send(to: str, port: int, size: int, timeout: float) -> dict:
    data = os.urandom(size)
    with socket.create_connection((to, port), timeout=timeout) as s:
        start = time.monotonic()
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        while s.recv(CHUNK):  # until the far side closes too: all of it was taken
            pass
        seconds = time.monotonic() - start
    return {"bytes": size, "xxh128": xxhash.xxh3_128_hexdigest(data), "seconds": seconds}


def _sum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ipv4(src: bytes, dst: bytes, proto: int, payload: bytes) -> bytes:
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, proto, 0, src, dst)
    header = header[:10] + struct.pack("!H", _sum16(header)) + header[12:]
    return header + payload


def _l4(src: bytes, dst: bytes, proto: int, segment: bytes, at: int) -> bytes:
    pseudo = src + dst + struct.pack("!BBH", 0, proto, len(segment))
    csum = _sum16(pseudo + segment)
    return segment[:at] + struct.pack("!H", csum) + segment[at + 2 :]


def templates(dst_mac: bytes, dst_ip: bytes, src_mac: bytes, src_ip: bytes, port: int) -> list:
    """Well-formed frames to the simulated host: ARP, ping, TCP SYN, UDP."""
    eth = lambda ether_type: dst_mac + src_mac + struct.pack("!H", ether_type)  # noqa: E731
    arp = eth(0x0806) + struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, src_mac, src_ip, b"\0" * 6, dst_ip)
    arp = b"\xff" * 6 + arp[6:]
    icmp = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + bytes(range(56))
    icmp = icmp[:2] + struct.pack("!H", _sum16(icmp)) + icmp[4:]
    syn = struct.pack("!HHIIBBHHH", 40000, port, 1, 0, 0x50, 0x02, 65535, 0, 0)
    udp = struct.pack("!HHHH", 40001, 9, 8 + 32, 0) + b"x" * 32
    return [
        arp,
        eth(0x0800) + _ipv4(src_ip, dst_ip, 1, icmp),
        eth(0x0800) + _ipv4(src_ip, dst_ip, 6, _l4(src_ip, dst_ip, 6, syn, 16)),
        eth(0x0800) + _ipv4(src_ip, dst_ip, 17, _l4(src_ip, dst_ip, 17, udp, 6)),
    ]


def mutate(rng: random.Random, frames: list) -> tuple:
    """One hostile frame and the name of how it was made."""
    kind = rng.choice(["random", "flip", "truncate", "extend", "ethertype", "valid"])
    base = bytearray(rng.choice(frames))
    if kind == "random":
        base = bytearray(rng.randbytes(rng.randrange(0, 1600)))
    elif kind == "flip":
        for _ in range(rng.randrange(1, 9)):
            base[rng.randrange(len(base))] = rng.randrange(256)
    elif kind == "truncate":
        base = base[: rng.randrange(0, len(base))]
    elif kind == "extend":
        base += rng.randbytes(rng.randrange(1, 9000 - len(base)))
    elif kind == "ethertype":
        base[12:14] = struct.pack("!H", rng.choice([0x88B5, 0x86DD, 0x8100, 0x0000, 0xFFFF, rng.randrange(0x10000)]))
    return bytes(base), kind


def fuzz(device: str, count: int, seed: int, to_mac: str, to_ip: str, port: int, burst: int) -> dict:
    rng = random.Random(seed)
    # A source that is nobody in the namespace, so the simulated host's answers
    # draw nothing more from this kernel.
    frames = templates(bytes.fromhex(to_mac.replace(":", "")), socket.inet_aton(to_ip), bytes.fromhex("020000000077"), socket.inet_aton("198.18.0.77"), port)
    taken: dict = {}
    refused: dict = {}
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((device, 0))
        i = 0
        while sum(taken.values()) < count and sum(refused.values()) < count:
            i += 1
            frame, kind = mutate(rng, frames)
            try:
                s.send(frame)
                taken[kind] = taken.get(kind, 0) + 1
            except OSError as e:
                key = f"{kind}: {os.strerror(e.errno)}"
                refused[key] = refused.get(key, 0) + 1
            if i % burst == 0:
                time.sleep(0.001)  # let the bridge read: the kernel's queue is 1000 frames
    return {"sent": sum(taken.values()), "taken": taken, "refused": refused}


def ping(to: str, count: int, interval: float, wait: float) -> dict:
    """Echo requests to `to`, one every `interval` s; each answer awaited up to `wait` s."""
    ident = os.getpid() & 0xFFFF
    answered, rtts = 0, []
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as s:
        for seq in range(1, count + 1):
            body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + bytes(range(56))
            body = body[:2] + struct.pack("!H", _sum16(body)) + body[4:]
            sent = time.monotonic()
            s.sendto(body, (to, 0))
            deadline = sent + wait
            while (left := deadline - time.monotonic()) > 0:
                s.settimeout(left)
                try:
                    packet, (src, _) = s.recvfrom(2048)
                except socket.timeout:
                    break
                icmp = packet[(packet[0] & 0x0F) * 4 :]
                if src == to and icmp[0] == 0 and struct.unpack("!HH", icmp[4:8]) == (ident, seq) and _sum16(icmp) == 0:
                    answered += 1
                    rtts.append((time.monotonic() - sent) * 1e3)
                    break
            if seq < count:
                time.sleep(max(0.0, interval - (time.monotonic() - sent)))
    return {"sent": count, "answered": answered, "rtt_ms": [round(r, 3) for r in rtts]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m nicsim.bridge.realpeer", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("server", help="take one TCP connection, read it to the end, print its XXH128")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=int, default=5001)
    c = sub.add_parser("client", help="send random bytes over TCP, print their XXH128")
    c.add_argument("--to", required=True)
    c.add_argument("--port", type=int, default=5001)
    c.add_argument("--bytes", type=int, default=10_000_000)
    f = sub.add_parser("fuzz", help="write random and mutated frames to a device")
    f.add_argument("--device", required=True)
    f.add_argument("--frames", type=int, default=10_000, help="frames the kernel is to take (some it refuses)")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--to-mac", default="02:00:00:00:00:01", help="the simulated host's MAC")
    f.add_argument("--to-ip", default="198.18.0.1")
    f.add_argument("--port", type=int, default=5001)
    f.add_argument("--burst", type=int, default=50, help="frames between 1 ms pauses")
    g = sub.add_parser("ping", help="ICMP echo requests from a raw socket, print how many were answered")
    g.add_argument("--to", required=True)
    g.add_argument("--count", type=int, default=3)
    g.add_argument("--interval", type=float, default=0.2, help="seconds between requests")
    g.add_argument("--wait", type=float, default=2, help="seconds to wait for each answer")
    for sp in (s, c):
        sp.add_argument("--timeout", type=float, default=60, help="seconds a socket may wait")
    args = p.parse_args(argv)
    if args.command == "server":
        out = serve(args.bind, args.port, args.timeout)
    elif args.command == "client":
        out = send(args.to, args.port, args.bytes, args.timeout)
    elif args.command == "ping":
        out = ping(args.to, args.count, args.interval, args.wait)
    else:
        out = fuzz(args.device, args.frames, args.seed, args.to_mac, args.to_ip, args.port, args.burst)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
