//! Header templates for the firmware tests.

use crate::nic::firmware::tso::Template;
use crate::wire::{build, Headers, TcpFields, L3, L4};

/// The headers of a TCP/IPv4 frame from 198.18.0.1 to 198.18.0.2, port 80.
pub fn template_bytes(src_port: u16, id: u16, seq: u32, ack: u32, psh: bool, fin: bool) -> Vec<u8> {
    let tcp = TcpFields { src_port, dst_port: 80, seq, ack: Some(ack), window: 65535, psh, fin };
    let h = Headers {
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_mac: [2, 0, 0, 0, 0, 1],
        vlan: None,
        l3: L3::Ipv4 { src: [198, 18, 0, 1], dst: [198, 18, 0, 2], ttl: 64, id, l4: L4::Tcp(tcp) },
    };
    build(&h, &[]).expect("headers build")
}

pub fn template(src_port: u16, id: u16, seq: u32, ack: u32, psh: bool, fin: bool) -> Template {
    Template::parse(&template_bytes(src_port, id, seq, ack, psh, fin)).expect("a built template parses")
}
