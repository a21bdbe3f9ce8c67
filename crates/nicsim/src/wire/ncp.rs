//! NetWare Core Protocol reads in packet-burst mode over IPX, as NetWare 3.12
//! and 4.x clients read files: one burst read request, answered by a burst of
//! up to 64 KB in as many packets as it takes, with no acknowledgement per
//! packet. Frames are Ethernet II (type 0x8137) with the IPX header (30 bytes,
//! checksum 0xFFFF, packet type 17 for NCP) and the burst header as Wireshark's
//! NCP dissector reads it (36 bytes); a request carries the burst read command
//! (24 bytes). Written here by hand: etherparse has no IPX.

/// The IPX socket of a NetWare server's NCP.
pub const NCP_SOCKET: u16 = 0x0451;
const ETHERTYPE_IPX: [u8; 2] = [0x81, 0x37];
const IPX_HEADER: usize = 30;
const BURST_HEADER: usize = 36;
/// Bytes of a burst read request's command.
pub const READ_COMMAND: usize = 24;
/// Bytes before a burst packet's data.
pub const HEADERS: usize = 14 + IPX_HEADER + BURST_HEADER;
/// The most file data one packet carries on Ethernet (1,500-byte IPX packets).
pub const MAX_DATA: usize = 1500 - IPX_HEADER - BURST_HEADER;
const PACKET_TYPE_NCP: u8 = 17;
const BURST_REQUEST_TYPE: [u8; 2] = [0x77, 0x77];
/// Burst flags: end of burst.
const EOB: u8 = 0x10;
/// The stream type of a burst transfer.
const BIG_SEND_BURST: u8 = 0x02;
/// The burst command that reads.
const READ: u32 = 1;

/// One end of an exchange: a station's node address (its MAC) and IPX socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    pub node: [u8; 6],
    pub socket: u16,
}

/// What a burst packet says, with its data.
#[derive(Debug, PartialEq, Eq)]
pub struct Burst<'a> {
    pub from: End,
    pub to: End,
    /// The connection it belongs to (the sender's connection ID).
    pub conn: u32,
    pub burst_seq: u16,
    /// The whole burst's bytes, and where in it this packet's data begins.
    pub total: u32,
    pub offset: u32,
    /// A read request's file range, or `None` for a packet of file data.
    pub read: Option<(u32, u32)>,
    pub data: &'a [u8],
}

/// A burst read request from `from` to a server's NCP socket: read `len` bytes at
/// `offset` of the file, padded to at least `size` bytes of NCP data.
pub fn read_request(from: End, server: [u8; 6], conn: u32, burst_seq: u16, (offset, len): (u32, u32), size: usize) -> Vec<u8> {
    let mut command = Vec::with_capacity(READ_COMMAND.max(size));
    // NetWare writes the command in its processor's order, as Wireshark reads it.
    command.extend(READ.to_le_bytes());
    command.extend(conn.to_be_bytes()); // the file handle: one open file a connection
    command.extend([0; 8]);
    command.extend(offset.to_be_bytes());
    command.extend(len.to_be_bytes());
    command.resize(READ_COMMAND.max(size), 0);
    let to = End { node: server, socket: NCP_SOCKET };
    packet(from, to, conn, burst_seq, (command.len() as u32, 0), &command, true)
}

/// A packet of the burst that answers a read: `data` at `offset` of a burst
/// of `total` bytes.
pub fn data(server: [u8; 6], to: End, conn: u32, burst_seq: u16, (total, offset): (u32, u32), data: &[u8]) -> Vec<u8> {
    let from = End { node: server, socket: NCP_SOCKET };
    packet(from, to, conn, burst_seq, (total, offset), data, offset as usize + data.len() == total as usize)
}

fn packet(from: End, to: End, conn: u32, burst_seq: u16, (total, offset): (u32, u32), data: &[u8], eob: bool) -> Vec<u8> {
    debug_assert!(data.len() <= MAX_DATA, "a burst packet fits a 1,500-byte IPX packet");
    // Never under Ethernet's 60 bytes: the headers alone are 80.
    let mut f = Vec::with_capacity(HEADERS + data.len());
    f.extend(to.node);
    f.extend(from.node);
    f.extend(ETHERTYPE_IPX);
    // IPX: no checksum, the packet's length, hop count 0, NCP; one network.
    f.extend([0xff, 0xff]);
    f.extend(((IPX_HEADER + BURST_HEADER + data.len()) as u16).to_be_bytes());
    f.extend([0, PACKET_TYPE_NCP]);
    for end in [to, from] {
        f.extend(1u32.to_be_bytes());
        f.extend(end.node);
        f.extend(end.socket.to_be_bytes());
    }
    f.extend(BURST_REQUEST_TYPE);
    f.extend([if eob { EOB } else { 0 }, BIG_SEND_BURST]);
    f.extend(conn.to_be_bytes()); // source connection ID
    f.extend(conn.to_be_bytes()); // destination connection ID
    f.extend((offset / MAX_DATA as u32).to_be_bytes()); // packet sequence
    f.extend(0u32.to_be_bytes()); // send delay
    f.extend(burst_seq.to_be_bytes());
    f.extend(burst_seq.to_be_bytes()); // ACK sequence
    f.extend(total.to_be_bytes());
    f.extend(offset.to_be_bytes());
    f.extend((data.len() as u16).to_be_bytes());
    f.extend(0u16.to_be_bytes()); // missing fragments
    f.extend(data);
    f
}

/// Whether `frame` is an IPX packet (to anyone).
pub fn is_ipx(frame: &[u8]) -> bool {
    frame.get(12..14) == Some(&ETHERTYPE_IPX[..])
}

/// A burst packet, or `None` for anything else (or one cut short).
pub fn parse(frame: &[u8]) -> Option<Burst<'_>> {
    if !is_ipx(frame) || frame.len() < HEADERS {
        return None;
    }
    let ipx = &frame[14..];
    let be16 = |b: &[u8], at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("four bytes"));
    let ipx_len = be16(ipx, 2) as usize;
    if ipx[5] != PACKET_TYPE_NCP || ipx_len < IPX_HEADER + BURST_HEADER || 14 + ipx_len > frame.len() {
        return None;
    }
    let end = |at: usize| End { node: ipx[at + 4..at + 10].try_into().expect("six bytes"), socket: be16(ipx, at + 10) };
    let (to, from) = (end(6), end(18));
    let b = &ipx[IPX_HEADER..ipx_len];
    if b[..2] != BURST_REQUEST_TYPE {
        return None;
    }
    let data_len = be16(b, 32) as usize;
    let data = b.get(BURST_HEADER..BURST_HEADER + data_len)?;
    let read = (to.socket == NCP_SOCKET && data.len() >= READ_COMMAND && data[..4] == READ.to_le_bytes())
        .then(|| (be32(data, 16), be32(data, 20)));
    Some(Burst { from, to, conn: be32(b, 4), burst_seq: be16(b, 20), total: be32(b, 24), offset: be32(b, 28), read, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: End = End { node: [2, 0, 0, 0, 0, 9], socket: 0x4003 };
    const SERVER: [u8; 6] = [2, 0, 0, 0, 0, 1];

    #[test]
    fn a_read_request_says_what_it_reads_and_pads_to_its_size() {
        let f = read_request(CLIENT, SERVER, 7, 3, (4096, 65_536), 64);
        assert_eq!(f.len(), HEADERS + 64);
        let b = parse(&f).expect("a burst packet");
        assert_eq!((b.from, b.to.node, b.to.socket, b.conn, b.burst_seq), (CLIENT, SERVER, NCP_SOCKET, 7, 3));
        assert_eq!(b.read, Some((4096, 65_536)));
    }

    #[test]
    fn a_data_packet_carries_its_place_in_the_burst_and_ends_it_when_last() {
        let bytes = vec![5u8; MAX_DATA];
        let f = data(SERVER, CLIENT, 7, 3, (65_536, 2 * MAX_DATA as u32), &bytes);
        assert_eq!(f.len(), 1514, "a full packet is a full Ethernet frame");
        let b = parse(&f).expect("a burst packet");
        assert_eq!((b.read, b.total, b.offset, b.data), (None, 65_536, 2 * MAX_DATA as u32, &bytes[..]));
        assert_eq!(f[14 + IPX_HEADER + 2] & EOB, 0);
        let last = data(SERVER, CLIENT, 7, 3, (100, 90), &[1; 10]);
        assert_eq!(last.len(), HEADERS + 10);
        assert_eq!(last[14 + IPX_HEADER + 2] & EOB, EOB);
        assert_eq!(parse(&last).expect("parses").data, &[1; 10]);
    }

    #[test]
    fn anything_else_or_a_packet_cut_short_is_not_a_burst() {
        let f = read_request(CLIENT, SERVER, 7, 3, (0, 10), 24);
        assert!(parse(&f[..f.len() - 1]).is_none());
        let mut not_ncp = f.clone();
        not_ncp[14 + 5] = 4;
        assert!(parse(&not_ncp).is_none());
        let mut ip = f;
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert!(parse(&ip).is_none());
    }
}
