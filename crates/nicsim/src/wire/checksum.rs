//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `data` as big-endian 16-bit words, folded to 16 bits
/// (not inverted). An odd trailing byte is padded with zero.
pub fn sum(data: &[u8]) -> u16 {
    fold(accumulate(0, data))
}

/// Add `data` to a running 64-bit accumulator. Each block of up to 64 KB is
/// summed by smoltcp's checksum, the one the TCP stack uses: in the machine's
/// byte order (with AVX2, 32 bytes an instruction, where the processor has it)
/// and folded into network order, since one's-complement addition commutes
/// with swapping the bytes of every word (RFC 1071 section 2(B)). Its 32-bit
/// sum holds a block: 32,768 words of at most 0xffff.
pub fn accumulate(acc: u64, data: &[u8]) -> u64 {
    data.chunks(65_536).fold(acc, |a, block| a + smoltcp::wire::checksum::data(block) as u64)
}

/// Fold a 64-bit accumulator to a 16-bit one's-complement sum.
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field value for `data`: the complement of its sum.
pub fn checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// RFC 1624 eqn. 3: the new checksum after one 16-bit word changed from `old` to `new`.
pub fn update(checksum: u16, old: u16, new: u16) -> u16 {
    apply(checksum, !old as u64 + new as u64)
}

/// RFC 1624's terms for the big-endian words of `old` becoming those of `new`
/// (slices of one even length): each old word's complement plus the new word.
/// Their sum, applied once, updates a checksum as a word-by-word update does.
#[inline]
pub fn changes(old: &[u8], new: &[u8]) -> u64 {
    old.chunks_exact(2)
        .zip(new.chunks_exact(2))
        .map(|(o, w)| !u16::from_be_bytes([o[0], o[1]]) as u64 + u16::from_be_bytes([w[0], w[1]]) as u64)
        .sum()
}

/// The sum of a 64-bit field's four 16-bit words, in network order: the terms
/// its bytes add where they replace zeros.
#[inline]
pub fn words64(v: u64) -> u64 {
    (v >> 48) + (v >> 32 & 0xffff) + (v >> 16 & 0xffff) + (v & 0xffff)
}

/// The checksum after the changes whose terms sum to `changes`.
#[inline]
pub fn apply(checksum: u16, changes: u64) -> u16 {
    !fold(!checksum as u64 + changes)
}

/// Update for a 32-bit field (two words), e.g. a TCP sequence number.
pub fn update32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = update(checksum, (old >> 16) as u16, (new >> 16) as u16);
    update(c, old as u16, new as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain RFC 1071 loop, as the reference.
    fn reference(data: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        for w in data.chunks(2) {
            let word = if w.len() == 2 { u16::from_be_bytes([w[0], w[1]]) } else { (w[0] as u16) << 8 };
            acc += word as u32;
            acc = (acc & 0xffff) + (acc >> 16);
        }
        !(acc as u16)
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: the sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2.
        assert_eq!(sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), 0xddf2);
    }

    #[test]
    fn a_correct_header_sums_to_ffff() {
        let mut hdr = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
        let c = checksum(&hdr);
        assert_eq!(c, 0xb861);
        hdr[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(sum(&hdr), 0xffff);
    }

    #[test]
    fn sums_past_a_64_kb_block_carry_as_the_reference_does() {
        for len in [65_535, 65_536, 65_537, 140_001] {
            let ones = vec![0xff; len];
            assert_eq!(checksum(&ones), reference(&ones), "{len} bytes of 0xff");
            let mixed: Vec<u8> = (0..len).map(|i| (i * 131 + 7) as u8).collect();
            assert_eq!(checksum(&mixed), reference(&mixed), "{len} mixed bytes");
        }
    }

    proptest! {
        #[test]
        fn pieces_at_even_offsets_sum_as_the_whole(data in proptest::collection::vec(any::<u8>(), 0..600), cut in any::<prop::sample::Index>()) {
            let at = cut.index(data.len() / 2 + 1) * 2;
            let acc = accumulate(accumulate(7, &data[..at]), &data[at..]);
            prop_assert_eq!(fold(acc), fold(accumulate(7, &data)));
        }

        #[test]
        fn matches_reference(data in proptest::collection::vec(any::<u8>(), 0..3000)) {
            prop_assert_eq!(checksum(&data), reference(&data));
        }

        #[test]
        fn changes_applied_at_once_equal_word_by_word_updates(
            start in any::<u16>(),
            old in proptest::collection::vec(any::<u8>(), 0..16),
            new_bytes in proptest::collection::vec(any::<u8>(), 16),
        ) {
            let old = &old[..old.len() / 2 * 2];
            let new = &new_bytes[..old.len()];
            let by_word = old.chunks(2).zip(new.chunks(2)).fold(start, |c, (o, w)| {
                update(c, u16::from_be_bytes([o[0], o[1]]), u16::from_be_bytes([w[0], w[1]]))
            });
            let at_once = apply(start, changes(old, new));
            prop_assert_eq!(at_once, by_word);
        }

        #[test]
        fn a_fields_words_are_its_terms_over_zeros(v in any::<u64>()) {
            // Over zeros, each old word's complement is 0xffff.
            prop_assert_eq!(changes(&[0; 8], &v.to_be_bytes()), 4 * 0xffff + words64(v));
        }

        #[test]
        fn incremental_update_equals_recomputation(
            mut data in proptest::collection::vec(any::<u8>(), 2..200),
            at in any::<prop::sample::Index>(),
            new in any::<u16>(),
        ) {
            if data.len() % 2 == 1 { data.pop(); }
            let i = at.index(data.len() / 2) * 2;
            let before = checksum(&data);
            let old = u16::from_be_bytes([data[i], data[i + 1]]);
            data[i..i + 2].copy_from_slice(&new.to_be_bytes());
            let full = checksum(&data);
            let incr = update(before, old, new);
            // 0x0000 and 0xffff are the same one's-complement number.
            prop_assert!(incr == full || (incr ^ full) == 0xffff && (incr == 0 || full == 0));
        }

        #[test]
        fn incremental_update32_equals_recomputation(mut data in proptest::collection::vec(any::<u8>(), 8..64), new in any::<u32>()) {
            let before = checksum(&data);
            let old = u32::from_be_bytes([data[4], data[5], data[6], data[7]]);
            data[4..8].copy_from_slice(&new.to_be_bytes());
            let full = checksum(&data);
            let incr = update32(before, old, new);
            prop_assert!(incr == full || (incr ^ full) == 0xffff && (incr == 0 || full == 0));
        }
    }
}
