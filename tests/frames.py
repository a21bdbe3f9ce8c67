"""Independent checks of captured frames with dpkt (not our parser)."""

import struct

import dpkt


def l3_offset(eth: dpkt.ethernet.Ethernet) -> int:
    return 14 + 4 * len(getattr(eth, "vlan_tags", []) or [])


def check_frame(buf: bytes) -> dict:
    """Parse one frame with dpkt and verify its IPv4 header and UDP/TCP checksums,
    or an IPX header (no checksum: 0xFFFF; its length within the frame).

    Returns what it found; raises AssertionError on a bad checksum."""
    eth = dpkt.ethernet.Ethernet(buf)
    off = l3_offset(eth)
    ip = eth.data
    found = {"type": eth.type, "l4": None}
    if isinstance(ip, dpkt.ip.IP):
        ihl = ip.hl * 4
        raw = buf[off : off + ip.len]
        assert dpkt.in_cksum(raw[:ihl]) == 0, "IPv4 header checksum"
        seg = raw[ihl:]
        pseudo = struct.pack(">4s4sxBH", ip.src, ip.dst, ip.p, len(seg))
        found["ip"] = 4
        found["id"] = ip.id
    elif isinstance(ip, dpkt.ip6.IP6):
        raw = buf[off : off + 40 + ip.plen]
        seg = raw[40:]
        pseudo = struct.pack(">16s16sI3xB", ip.src, ip.dst, len(seg), ip.nxt)
        found["ip"] = 6
    elif isinstance(ip, dpkt.ipx.IPX):
        assert ip.sum == 0xFFFF and 30 <= ip.len <= len(buf) - 14, "IPX header"
        found["l4"] = "ipx"
        found["packet_type"] = ip.pt
        return found
    else:
        return found
    if isinstance(ip.data, dpkt.udp.UDP):
        found["l4"] = "udp"
        if found["ip"] == 6 or seg[6:8] != b"\0\0":
            assert dpkt.in_cksum(pseudo + seg) == 0, "UDP checksum"
    elif isinstance(ip.data, dpkt.tcp.TCP):
        found["l4"] = "tcp"
        found["seq"] = ip.data.seq
        found["ports"] = (ip.data.sport, ip.data.dport)
        found["payload_len"] = len(ip.data.data)
        assert dpkt.in_cksum(pseudo + seg) == 0, "TCP checksum"
    return found


def read_pcap(path):
    with open(path, "rb") as f:
        return [(ts, buf) for ts, buf in dpkt.pcap.Reader(f)]


# Interface statistics: the block type and its options' codes (dpkt parses the
# options, not the block).
ISB, ISB_IFRECV, ISB_IFDROP = 5, 4, 5


def isb_options(block: bytes) -> dict:
    """An interface statistics block's options, code -> value bytes (they follow
    its type, length, interface and 64-bit time stamp)."""
    opts, at = {}, 20
    while at < len(block) - 4:
        opt = dpkt.pcapng.PcapngOptionLE(block[at:])
        if opt.code == dpkt.pcapng.PCAPNG_OPT_ENDOFOPT:
            break
        opts[opt.code] = opt.data[: opt.len]
        at += len(opt)
    return opts


def read_pcapng(path):
    """A pcapng file's interfaces ({name, description, tsresol, and from its
    statistics received and dropped}) and records (interface, direction flags,
    time in ns, bytes), block by block with dpkt's parsers: its Reader takes
    the first interface only."""
    interfaces, records = [], []
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        block = data[at : at + length]
        if kind == dpkt.pcapng.PCAPNG_BT_IDB:
            idb = dpkt.pcapng.InterfaceDescriptionBlockLE(block)
            opts = {o.code: o.data for o in idb.opts}
            interfaces.append({
                "name": opts.get(2, b"").decode(),
                "description": opts.get(3, b"").decode(),
                "tsresol": opts.get(9, b"\x06")[0],
            })
        elif kind == ISB:
            (iface,) = struct.unpack_from("<I", block, 8)
            opts = isb_options(block)
            interfaces[iface]["received"] = struct.unpack("<Q", opts[ISB_IFRECV])[0]
            interfaces[iface]["dropped"] = struct.unpack("<Q", opts[ISB_IFDROP])[0]
        elif kind == dpkt.pcapng.PCAPNG_BT_EPB:
            epb = dpkt.pcapng.EnhancedPacketBlockLE(block)
            flags = next((struct.unpack("<I", o.data)[0] for o in epb.opts if o.code == 2), 0)
            records.append((epb.iface_id, flags & 3, (epb.ts_high << 32) | epb.ts_low, bytes(epb.pkt_data)))
        at += length
    return interfaces, records
