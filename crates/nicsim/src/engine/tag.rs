//! A component's timer tags: what falls due, packed into the `u64` a timer
//! carries as a kind (the top byte), an index (the next byte: an adapter, a
//! processor) and a value (the low 48 bits: a generation, a count, a slot).

const VALUE: u64 = (1 << 48) - 1;

/// `kind`, `index` (below 256) and `value` (below 2^48) as one tag.
pub fn pack(kind: u8, index: usize, value: u64) -> u64 {
    debug_assert!(index < 256 && value <= VALUE, "a tag's index or value is out of range");
    ((kind as u64) << 56) | ((index as u64 & 0xff) << 48) | (value & VALUE)
}

/// A tag's kind, index and value.
pub fn unpack(tag: u64) -> (u8, usize, u64) {
    ((tag >> 56) as u8, ((tag >> 48) & 0xff) as usize, tag & VALUE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_unpacks_to_what_was_packed() {
        for (k, i, v) in [(1, 0, 0), (11, 255, VALUE), (200, 7, 123_456_789)] {
            assert_eq!(unpack(pack(k, i, v)), (k, i, v));
        }
    }
}
