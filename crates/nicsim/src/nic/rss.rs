//! Receive-side scaling: the Toeplitz hash an adapter computes over a received
//! frame's addresses and ports with a 40-byte secret key, and the 128-entry
//! indirection table whose entry at the hash's low 7 bits names the receive
//! queue (as Linux indexes it, Documentation/networking/scaling.rst).

use etherparse::EtherType;

use crate::wire::{Transport, View};

/// The key of Microsoft's RSS verification suite, which Linux drivers and the
/// Intel 82599 also ship as their default.
pub const VERIFICATION_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b,
    0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// Entries of the indirection table.
pub const TABLE_ENTRIES: usize = 128;

/// The Toeplitz hash of `input` under `key`: for each set bit of the input, in
/// order from the most significant, the 32 key bits starting at that bit's
/// position are XORed into the result. The key must be 4 bytes longer than the
/// input (40 bytes cover IPv6 with ports: 36 bytes).
pub fn toeplitz(key: &[u8], input: &[u8]) -> u32 {
    assert!(key.len() >= input.len() + 4, "a {}-byte key is too short for {} bytes of input", key.len(), input.len());
    let mut result = 0u32;
    // The key's 32-bit window at the current input bit, and the bits that slide in after it.
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, &byte) in input.iter().enumerate() {
        let next = key[i + 4];
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    result
}

/// The hash's input for a frame, as an adapter with IPv4, IPv6, TCP and UDP
/// hashing on builds it: source and destination address, then source and
/// destination port for TCP and UDP; `None` for a frame with no IP header
/// (which goes to the default queue).
pub fn input(frame: &[u8]) -> Option<Vec<u8>> {
    let v = View::parse(frame).ok()?;
    let l3 = v.l3_offset;
    let addresses = match v.ether_type {
        EtherType::IPV4 => frame.get(l3 + 12..l3 + 20)?,
        EtherType::IPV6 => frame.get(l3 + 8..l3 + 40)?,
        _ => return None,
    };
    let mut bytes = addresses.to_vec();
    if let Some((l4, Transport::Tcp | Transport::Udp)) = v.l4 {
        bytes.extend_from_slice(frame.get(l4..l4 + 4)?);
    }
    Some(bytes)
}

/// The indirection table: each entry names a receive queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indirection {
    queues: Vec<u16>,
}

impl Indirection {
    /// `queues` queues in turn, as Linux fills the table by default
    /// (`ethtool_rxfh_indir_default`).
    pub fn spread(queues: u16) -> Self {
        assert!(queues > 0, "at least one queue");
        Indirection { queues: (0..TABLE_ENTRIES).map(|i| (i % queues as usize) as u16).collect() }
    }

    /// The queue of a frame with `hash`.
    pub fn queue(&self, hash: u32) -> u16 {
        self.queues[hash as usize % TABLE_ENTRIES]
    }

    /// How many queues it names (the highest, and those below it).
    pub fn queues(&self) -> usize {
        self.queues.iter().max().map_or(0, |&q| q as usize + 1)
    }
}

/// How an adapter steers the frames it receives over its queues: by the
/// hash of each frame under `key`, looked up in `table`; a frame with no IP
/// header goes to the first queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Steering {
    pub key: [u8; 40],
    pub table: Indirection,
}

impl Steering {
    /// `queues` queues in turn under `key`.
    pub fn spread(queues: u16, key: [u8; 40]) -> Self {
        Steering { key, table: Indirection::spread(queues) }
    }

    /// The queue that takes `frame`.
    #[inline]
    pub fn queue(&self, frame: &[u8]) -> usize {
        input(frame).map_or(0, |i| self.table.queue(toeplitz(&self.key, &i)) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    use crate::wire::{build, Headers, L3, L4};

    /// The hash's input for addresses `src` and `dst` (IPv4 or IPv6), with
    /// their ports where given.
    fn tuple(src: &str, dst: &str, ports: Option<(u16, u16)>) -> Vec<u8> {
        let octets = |a: &str| match a.parse::<IpAddr>().expect("an address") {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        let mut b = [octets(src), octets(dst)].concat();
        if let Some((sp, dp)) = ports {
            b.extend_from_slice(&[sp.to_be_bytes(), dp.to_be_bytes()].concat());
        }
        b
    }

    /// All 16 values of the verification suite (Microsoft, "Verifying the RSS
    /// Hash Calculation"; also the Intel 82599 datasheet's and DPDK's thash tests):
    /// each pair of addresses hashed alone and with its TCP ports.
    #[test]
    fn the_hash_gives_every_published_verification_value() {
        let suite = [
            ("66.9.149.187", 2794, "161.142.100.80", 1766, 0x323e8fc2, 0x51ccc178),
            ("199.92.111.2", 14230, "65.69.140.83", 4739, 0xd718262a, 0xc626b0ea),
            ("24.19.198.95", 12898, "12.22.207.184", 38024, 0xd2d0a5de, 0x5c2b394a),
            ("38.27.205.30", 48228, "209.142.163.6", 2217, 0x82989176, 0xafc7327f),
            ("153.39.163.191", 44251, "202.188.127.2", 1303, 0x5d1809c5, 0x10e828a2),
            ("3ffe:2501:200:1fff::7", 2794, "3ffe:2501:200:3::1", 1766, 0x2cc18cd5, 0x40207d3d),
            ("3ffe:501:8::260:97ff:fe40:efab", 14230, "ff02::1", 4739, 0x0f0c461c, 0xdde51bbf),
            ("3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, "fe80::200:f8ff:fe21:67cf", 38024, 0x4b61e985, 0x02d1feef),
        ];
        for (src, sp, dst, dp, only, tcp) in suite {
            assert_eq!(toeplitz(&VERIFICATION_KEY, &tuple(src, dst, None)), only, "{src} -> {dst}");
            assert_eq!(toeplitz(&VERIFICATION_KEY, &tuple(src, dst, Some((sp, dp)))), tcp, "{src} {sp} -> {dst} {dp}");
        }
    }

    #[test]
    fn a_frame_hashes_on_its_addresses_and_ports() {
        let l4 = L4::Udp { src_port: 2794, dst_port: 1766 };
        let l3 = L3::Ipv4 { src: [66, 9, 149, 187], dst: [161, 142, 100, 80], ttl: 64, id: 1, l4 };
        let frame =
            build(&Headers { dst_mac: [2, 0, 0, 0, 0, 1], src_mac: [2, 0, 0, 0, 0, 2], vlan: None, l3 }, &[0; 18]).expect("a frame");
        let input = input(&frame).expect("an IPv4 frame");
        assert_eq!(toeplitz(&VERIFICATION_KEY, &input), 0x51ccc178, "the verification suite's first 4-tuple");
        let arp = vec![0xffu8; 14].into_iter().chain([0x08, 0x06]).chain(std::iter::repeat_n(0, 46)).collect::<Vec<u8>>();
        assert_eq!(super::input(&arp), None, "no IP header, no hash");
    }

    /// 1,000 flows over 8 queues: each queue's count is binomial (n = 1000,
    /// p = 1/8), so the counts' chi-square with 7 degrees of freedom stays
    /// below 24.3 but once in a thousand.
    #[test]
    fn a_thousand_flows_spread_over_eight_queues_as_a_binomial_would() {
        let table = Indirection::spread(8);
        let mut counts = [0u32; 8];
        for i in 0..1000u32 {
            let src = Ipv4Addr::from(0x0a00_0000 + i * 7919);
            let input = tuple(&src.to_string(), "192.168.1.1", Some((1024 + (i % 50000) as u16, 80)));
            counts[table.queue(toeplitz(&VERIFICATION_KEY, &input)) as usize] += 1;
        }
        let expected = 1000.0 / 8.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        assert!(chi2 < 24.32, "counts {counts:?}: chi-square {chi2:.1}");
        assert!(counts.iter().all(|&c| c > 0));
    }

    #[test]
    fn the_table_names_queues_in_turn_by_the_hash_low_seven_bits() {
        let t = Indirection::spread(3);
        assert_eq!((0..6).map(|h| t.queue(h)).collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(t.queue(128 + 4), t.queue(4), "only the low seven bits index it");
    }
}
