//! The 12 bytes a source writes at the start of each payload (when it fits), so
//! that a sink can tell flows apart and count gaps: "NS", flow (u16), sequence (u64).

pub const STAMP_LEN: usize = 12;
const MAGIC: [u8; 2] = *b"NS";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub flow: u16,
    pub seq: u64,
}

impl Stamp {
    pub fn to_bytes(self) -> [u8; STAMP_LEN] {
        let mut b = [0u8; STAMP_LEN];
        b[..2].copy_from_slice(&MAGIC);
        b[2..4].copy_from_slice(&self.flow.to_be_bytes());
        b[4..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }
    pub fn parse(payload: &[u8]) -> Option<Stamp> {
        let b = payload.get(..STAMP_LEN)?;
        if b[..2] != MAGIC {
            return None;
        }
        Some(Stamp { flow: u16::from_be_bytes([b[2], b[3]]), seq: u64::from_be_bytes(b[4..].try_into().ok()?) })
    }
}
