//! The TTCP bulk transfer as a session's application: the sender writes
//! `bytes` of a seeded stream in calls of `message` bytes and closes; the
//! receiver reads until the sender's FIN. Both ends keep an XXH3 128-bit
//! digest (XXH128) of the stream, so a transfer that arrived whole and in
//! order shows equal digests (with another simulated host, a TCP offload host
//! or real Linux). XXH3 rather than SHA-256: the check guards against the
//! model's own mistakes, not an adversary, and SHA-256 took half of a 10 Gb/s
//! transfer's time even with the processor's SHA instructions
//! (docs/benchmarks.md).

use twox_hash::XxHash3_128;

use crate::time::Time;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream's bytes from `offset`, `len` of them: byte i is byte i % 8 (least
/// significant first) of `splitmix(seed ^ i / 8)`.
pub fn content(seed: u64, offset: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    content_into(seed, offset, &mut out);
    out
}

/// The stream's bytes from `offset` written over `out`, as `content` gives
/// them: each word is made once and whole words are written whole, four at
/// a time where the processor has AVX2.
pub fn content_into(seed: u64, offset: u64, out: &mut [u8]) {
    let word = |w: u64| splitmix(seed ^ w).to_le_bytes();
    let len = out.len();
    let from = (offset % 8) as usize;
    let head = if from == 0 { 0 } else { (8 - from).min(len) };
    out[..head].copy_from_slice(&word(offset / 8)[from..from + head]);
    let mut w = (offset + head as u64) / 8;
    let mut at = head;
    #[cfg(target_arch = "x86_64")]
    if len - head >= 64 && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
        // SAFETY: the processor has AVX-512 F and DQ, checked just above.
        let n = unsafe { words_avx512(seed, w, &mut out[head..]) };
        at += n;
        w += (n / 8) as u64;
    }
    #[cfg(target_arch = "x86_64")]
    if len - at >= 32 && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        let n = unsafe { words_avx2(seed, w, &mut out[at..]) };
        at += n;
        w += (n / 8) as u64;
    }
    let mut words = out[at..].chunks_exact_mut(8);
    for chunk in &mut words {
        chunk.copy_from_slice(&word(w));
        w += 1;
    }
    let tail = words.into_remainder();
    let n = tail.len();
    tail.copy_from_slice(&word(w)[..n]);
}

/// Whole groups of eight words from word `first` on, written over the start of
/// `out`, eight at a time with AVX-512 (whose DQ extension multiplies 64-bit
/// lanes in one instruction, where AVX2 takes three of 32 bits and a shift);
/// returns the bytes written, a multiple of 64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn words_avx512(seed: u64, first: u64, out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let splat = |v: u64| _mm512_set1_epi64(v as i64);
    let (seed, golden, eight) = (splat(seed), splat(0x9E37_79B9_7F4A_7C15), splat(8));
    let (m1, m2) = (splat(0xBF58_476D_1CE4_E5B9), splat(0x94D0_49BB_1331_11EB));
    let mut w = _mm512_add_epi64(splat(first), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    let whole = out.len() / 64 * 64;
    for block in out.chunks_exact_mut(64) {
        // splitmix, lane by lane.
        let mut x = _mm512_add_epi64(_mm512_xor_si512(seed, w), golden);
        x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64::<30>(x)), m1);
        x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64::<27>(x)), m2);
        x = _mm512_xor_si512(x, _mm512_srli_epi64::<31>(x));
        // SAFETY: `block` is 64 bytes; an unaligned store.
        unsafe { _mm512_storeu_si512(block.as_mut_ptr() as *mut __m512i, x) };
        w = _mm512_add_epi64(w, eight);
    }
    whole
}

/// Whole groups of four words from word `first` on, written over the start of
/// `out`, four at a time with AVX2 (which multiplies 64-bit lanes by their
/// 32-bit halves); returns the bytes written, a multiple of 32.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn words_avx2(seed: u64, first: u64, out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let splat = |v: u64| _mm256_set1_epi64x(v as i64);
    // a * b mod 2^64 from 32-bit products: lo(a) lo(b) + (lo(a) hi(b) + hi(a) lo(b)) << 32.
    let times = |a: __m256i, b: u64| {
        let (lo, hi) = (splat(b), splat(b >> 32));
        let cross = _mm256_add_epi64(_mm256_mul_epu32(a, hi), _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), lo));
        _mm256_add_epi64(_mm256_mul_epu32(a, lo), _mm256_slli_epi64::<32>(cross))
    };
    let (seed, golden, four) = (splat(seed), splat(0x9E37_79B9_7F4A_7C15), splat(4));
    let mut w = _mm256_set_epi64x((first + 3) as i64, (first + 2) as i64, (first + 1) as i64, first as i64);
    let whole = out.len() / 32 * 32;
    let mut blocks = out.chunks_exact_mut(32);
    for block in &mut blocks {
        // splitmix, lane by lane.
        let mut x = _mm256_add_epi64(_mm256_xor_si256(seed, w), golden);
        x = times(_mm256_xor_si256(x, _mm256_srli_epi64::<30>(x)), 0xBF58_476D_1CE4_E5B9);
        x = times(_mm256_xor_si256(x, _mm256_srli_epi64::<27>(x)), 0x94D0_49BB_1331_11EB);
        x = _mm256_xor_si256(x, _mm256_srli_epi64::<31>(x));
        // SAFETY: `block` is 32 bytes; an unaligned store.
        unsafe { _mm256_storeu_si256(block.as_mut_ptr() as *mut __m256i, x) };
        w = _mm256_add_epi64(w, four);
    }
    whole
}

#[derive(Clone)]
pub struct Stream {
    /// Bytes per send or receive call.
    pub message: u32,
    /// Seeds the sender's bytes.
    pub seed: u64,
    digest: XxHash3_128,
    /// Bytes through the application (written or read).
    pub bytes: u64,
    /// When the transfer ended: the sender's last byte acknowledged, or the
    /// receiver's reading of the FIN.
    pub done: Option<Time>,
    /// This end has closed its side.
    pub closed: bool,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("message", &self.message)
            .field("seed", &self.seed)
            .field("bytes", &self.bytes)
            .field("digest", &self.xxh128_hex())
            .finish()
    }
}

impl Stream {
    pub fn new(message: u32, seed: u64) -> Stream {
        Stream { message, seed, digest: XxHash3_128::new(), bytes: 0, done: None, closed: false }
    }

    /// Sender: the stream's next `len` bytes (not yet taken).
    pub fn next(&self, len: usize) -> Vec<u8> {
        content(self.seed, self.bytes, len)
    }

    /// Sender: the stream's next bytes written over `out` and taken through
    /// the application; returns the calls that took, as `through` does.
    pub fn write(&mut self, out: &mut [u8]) -> u64 {
        content_into(self.seed, self.bytes, out);
        self.through(out)
    }

    /// `data` went through the application; returns the calls that took
    /// (one per message-sized piece begun).
    pub fn through(&mut self, data: &[u8]) -> u64 {
        let calls = |b: u64| b.div_ceil(self.message as u64);
        let before = calls(self.bytes);
        self.digest.write(data);
        self.bytes += data.len() as u64;
        calls(self.bytes) - before
    }

    /// The first 48 bits of the stream's digest, as a number a report can hold.
    pub fn digest48(&self) -> u64 {
        (self.digest.finish_128() >> 80) as u64
    }

    /// The stream's XXH128 so far, in hex, as `xxhsum -H2` writes it.
    pub fn xxh128_hex(&self) -> String {
        format!("{:032x}", self.digest.finish_128())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytewise(seed: u64, i: u64) -> u8 {
        (splitmix(seed ^ (i / 8)) >> ((i % 8) * 8)) as u8
    }

    proptest::proptest! {
        #[test]
        fn any_piece_is_the_streams_bytes(seed: u64, offset in 0u64..1 << 40, len in 0usize..3000) {
            let expected: Vec<u8> = (offset..offset + len as u64).map(|i| bytewise(seed, i)).collect();
            proptest::prop_assert_eq!(content(seed, offset, len), expected);
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn each_vector_path_writes_the_streams_words() {
        // `content` takes the widest path the processor has; each is checked here
        // on its own, where the processor has it.
        let expected: Vec<u8> = (8 * 5..8 * 5 + 200).map(|i| bytewise(11, i)).collect();
        let mut paths = 0;
        if std::is_x86_feature_detected!("avx2") {
            let mut out = vec![0u8; 200];
            // SAFETY: the processor has AVX2.
            let n = unsafe { words_avx2(11, 5, &mut out) };
            assert_eq!((n, &out[..n]), (192, &expected[..192]), "AVX2");
            paths += 1;
        }
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
            let mut out = vec![0u8; 200];
            // SAFETY: the processor has AVX-512 F and DQ.
            let n = unsafe { words_avx512(11, 5, &mut out) };
            assert_eq!((n, &out[..n]), (192, &expected[..192]), "AVX-512");
            paths += 1;
        }
        if paths == 0 {
            eprintln!("no vector path on this processor: content's scalar words are what the other tests check");
        }
    }

    #[test]
    fn the_stream_is_the_same_bytes_from_any_offset() {
        for (offset, len) in [(0, 0), (0, 1), (3, 5), (3, 2), (5, 20), (8, 8), (13, 1500), (65_533, 7), (7, 0), (6, 10)] {
            let expected: Vec<u8> = (offset..offset + len as u64).map(|i| bytewise(9, i)).collect();
            assert_eq!(content(9, offset, len), expected, "offset {offset}, {len} bytes");
        }
    }

    #[test]
    fn the_digest_is_xxh128_as_the_reference_library_gives_it() {
        // Python's `xxhash` (the C library): xxh3_128_hexdigest of b"" and of
        // bytes(range(256)) * 40, the second long enough for the vector path.
        let mut s = Stream::new(1000, 7);
        assert_eq!(s.xxh128_hex(), "99aa06d3014798d86001c324468d497f");
        let data: Vec<u8> = (0..40).flat_map(|_| 0..=255u8).collect();
        for piece in data.chunks(1_000) {
            s.through(piece);
        }
        assert_eq!(s.xxh128_hex(), "1cb22534d0d96975c03d2231ab9348f3");
    }

    #[test]
    fn calls_are_counted_per_message_begun_and_the_digest_is_of_the_stream() {
        let mut s = Stream::new(1000, 7);
        let a = s.next(1500);
        assert_eq!(s.through(&a), 2, "1,500 bytes begin two 1,000-byte calls");
        let b = s.next(400);
        assert_eq!(s.through(&b), 0, "the second call goes on");
        let c = s.next(200);
        assert_eq!(s.through(&c), 1);
        let whole = content(7, 0, 2100);
        let mut written = Stream::new(1000, 7);
        let mut made = vec![0xaa; 2100];
        assert_eq!(written.write(&mut made[..1500]) + written.write(&mut made[1500..]), 3, "calls as the pieces above");
        assert_eq!(made, whole, "written in place, the same bytes");
        assert_eq!(written.xxh128_hex(), s.xxh128_hex());
        let mut one = Stream::new(1000, 7);
        one.through(&whole);
        assert_eq!(s.xxh128_hex(), one.xxh128_hex(), "pieces digest as the whole stream");
        assert_eq!(s.digest48(), u64::from_str_radix(&s.xxh128_hex()[..12], 16).unwrap(), "the digest's first 48 bits");
    }

    #[test]
    fn the_digest_is_xxh128_as_xxhsum_writes_it() {
        // `printf abc | xxhsum -H2`, and the reference implementation's test vector.
        let mut s = Stream::new(1000, 0);
        s.through(b"abc");
        assert_eq!(s.xxh128_hex(), "06b05ab6733a618578af5f94892f3950");
    }
}
