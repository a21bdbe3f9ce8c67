//! The batch format shared by packet fragmentation and packet coalescing
//! (Wadge, Malta 2001: packet fragmentation and coalescing): whole frames laid end to end in one buffer,
//! each behind a 2-byte big-endian length, so one DMA moves many frames. The host
//! packs a chunk for the firmware to split on transmit; on receive the firmware
//! packs one for the host to split.

use std::ops::Range;

/// The largest chunk: one 64 KB DMA (43 full frames).
pub const MAX_CHUNK: usize = 65_536;
const PREFIX: usize = 2;

/// Bytes a frame of `len` takes in a chunk.
pub fn footprint(len: usize) -> usize {
    PREFIX + len
}

/// Append `frame` to `chunk`.
pub fn push(chunk: &mut Vec<u8>, frame: &[u8]) {
    let len = u16::try_from(frame.len()).expect("frames are shorter than 64 KB");
    chunk.extend_from_slice(&len.to_be_bytes());
    chunk.extend_from_slice(frame);
}

/// The frames of a chunk, as ranges of it. Bytes from outside (a host's chunk)
/// may be anything: a length that runs past the end or a frame shorter than an
/// Ethernet header is an error naming its offset.
pub fn split(chunk: &[u8]) -> Result<Vec<Range<usize>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < chunk.len() {
        let Some(prefix) = chunk.get(at..at + PREFIX) else {
            return Err(format!("chunk byte {at}: a length prefix cut short by the end of the chunk"));
        };
        let len = u16::from_be_bytes([prefix[0], prefix[1]]) as usize;
        let start = at + PREFIX;
        if len < 14 {
            return Err(format!("chunk byte {at}: a {len}-byte frame is shorter than an Ethernet header"));
        }
        if start + len > chunk.len() {
            return Err(format!("chunk byte {at}: a {len}-byte frame runs past the end of the {}-byte chunk", chunk.len()));
        }
        out.push(start..start + len);
        at = start + len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn forty_three_full_frames_fit_one_chunk() {
        let mut c = Vec::new();
        for _ in 0..43 {
            push(&mut c, &[7u8; 1514]);
        }
        assert!(c.len() <= MAX_CHUNK);
        assert!(c.len() + footprint(1514) > MAX_CHUNK, "a 44th does not");
        assert_eq!(split(&c).unwrap().len(), 43);
    }

    #[test]
    fn hostile_chunks_are_refused_with_the_offset() {
        assert!(split(&[0, 5, 1, 2, 3, 4, 5]).unwrap_err().contains("byte 0"));
        let mut c = Vec::new();
        push(&mut c, &[1u8; 60]);
        c.extend_from_slice(&[0, 100, 1]);
        assert!(split(&c).unwrap_err().contains("chunk byte 62: a 100-byte frame runs past"));
        c.truncate(63);
        assert!(split(&c).unwrap_err().contains("cut short"));
        assert_eq!(split(&[]).unwrap(), vec![]);
    }

    proptest! {
        #[test]
        fn pack_then_split_returns_the_frames(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 14..1600), 0..20)) {
            let mut c = Vec::new();
            for f in &frames {
                push(&mut c, f);
            }
            let back: Vec<Vec<u8>> = split(&c).unwrap().into_iter().map(|r| c[r].to_vec()).collect();
            prop_assert_eq!(back, frames);
        }

        #[test]
        fn split_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
            if let Ok(ranges) = split(&bytes) {
                prop_assert!(ranges.iter().all(|r| r.end <= bytes.len()));
            }
        }
    }
}
