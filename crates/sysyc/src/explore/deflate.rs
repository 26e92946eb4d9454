//! A small raw-DEFLATE compressor (RFC 1951): LZ77 over a 32 KiB window with hash
//! chains, then dynamic Huffman blocks. The explorer page embeds its data
//! compressed this way and inflates it with the browser's own
//! `DecompressionStream("deflate-raw")`, so a 2 MB source of many similar lines
//! costs a quarter of that in the page.

/// Window size and the longest match DEFLATE can say.
const WINDOW: usize = 1 << 15;
const MAX_MATCH: usize = 258;
const MIN_MATCH: usize = 3;
/// How many earlier positions with the same hash a match search tries.
const MAX_CHAIN: usize = 48;
/// Symbols per block (each block has its own codes).
const BLOCK_SYMBOLS: usize = 1 << 16;

const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// The order in which the code-length code's lengths are written.
const CLEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// One LZ77 symbol: a byte, or a copy of `len` bytes from `dist` back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Lit(u8),
    Copy { len: u16, dist: u16 },
}

/// The code (index into the base tables) of a length or distance.
fn code_of(base: &[u16], v: u16) -> usize {
    base.partition_point(|&b| b <= v) - 1
}

struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    /// Writes the low `n` bits of `v`, least significant first.
    fn put(&mut self, v: u32, n: u32) {
        self.acc |= (v as u64) << self.n;
        self.n += n;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// Writes a Huffman code (most significant bit first).
    fn code(&mut self, code: u16, len: u8) {
        let rev = (code as u32).reverse_bits() >> (32 - len as u32);
        self.put(rev, len as u32);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Code lengths of at most `limit` bits for `freq` (0 for unused symbols); at least
/// two symbols get a code, so that every code is complete.
fn code_lengths(freq: &[u32], limit: u8) -> Vec<u8> {
    let mut f: Vec<u64> = freq.iter().map(|&x| x as u64).collect();
    let mut used = f.iter().filter(|&&x| x > 0).count();
    for slot in f.iter_mut() {
        if used >= 2 {
            break;
        }
        if *slot == 0 {
            *slot = 1;
            used += 1;
        }
    }
    loop {
        let lens = huffman(&f);
        if lens.iter().all(|&l| l <= limit) {
            return lens;
        }
        // Too deep: flatten the frequencies and try again.
        for x in f.iter_mut().filter(|x| **x > 0) {
            *x = (*x >> 1) | 1;
        }
    }
}

/// Unlimited Huffman code lengths for the nonzero frequencies.
fn huffman(f: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut parent: Vec<usize> = Vec::new();
    let mut heap = BinaryHeap::new();
    let mut leaf = vec![usize::MAX; f.len()];
    for (s, &x) in f.iter().enumerate() {
        if x > 0 {
            leaf[s] = parent.len();
            heap.push(Reverse((x, parent.len())));
            parent.push(usize::MAX);
        }
    }
    while heap.len() > 1 {
        let Reverse((a, i)) = heap.pop().expect("two nodes");
        let Reverse((b, j)) = heap.pop().expect("two nodes");
        let k = parent.len();
        parent.push(usize::MAX);
        parent[i] = k;
        parent[j] = k;
        heap.push(Reverse((a + b, k)));
    }
    // Depth of every node, parents after children: compute from the root down.
    let mut depth = vec![0u8; parent.len()];
    for k in (0..parent.len()).rev() {
        if parent[k] != usize::MAX {
            depth[k] = depth[parent[k]].saturating_add(1);
        }
    }
    leaf.iter()
        .map(|&n| if n == usize::MAX { 0 } else { depth[n] })
        .collect()
}

/// Canonical codes for `lens` (RFC 1951 3.2.2).
fn canonical(lens: &[u8]) -> Vec<u16> {
    let mut count = [0u16; 16];
    for &l in lens {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lens.iter()
        .map(|&l| {
            if l == 0 {
                0
            } else {
                let c = next[l as usize];
                next[l as usize] += 1;
                c
            }
        })
        .collect()
}

/// LZ77 symbols of `data`: greedy matching over hash chains of 3-byte prefixes.
fn tokens(data: &[u8]) -> Vec<Token> {
    const HASH_BITS: u32 = 15;
    let hash = |p: usize| -> usize {
        let v = (data[p] as u32) << 16 | (data[p + 1] as u32) << 8 | data[p + 2] as u32;
        (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
    };
    let mut head = vec![usize::MAX; 1 << HASH_BITS];
    let mut prev = vec![usize::MAX; WINDOW];
    let mut out = Vec::new();
    let insert = |p: usize, head: &mut Vec<usize>, prev: &mut Vec<usize>| {
        if p + MIN_MATCH <= data.len() {
            let h = hash(p);
            prev[p % WINDOW] = head[h];
            head[h] = p;
        }
    };
    let mut p = 0;
    while p < data.len() {
        let mut best = (0usize, 0usize);
        if p + MIN_MATCH <= data.len() {
            let max = MAX_MATCH.min(data.len() - p);
            let mut cand = head[hash(p)];
            let mut chain = 0;
            while cand != usize::MAX && p - cand <= WINDOW && chain < MAX_CHAIN {
                if data[cand + best.0.min(max - 1)] == data[p + best.0.min(max - 1)] {
                    let len = data[cand..cand + max]
                        .iter()
                        .zip(&data[p..p + max])
                        .take_while(|(a, b)| a == b)
                        .count();
                    if len > best.0 {
                        best = (len, p - cand);
                        if len == max {
                            break;
                        }
                    }
                }
                let next = prev[cand % WINDOW];
                // A chain entry overwritten by a newer position ends the chain.
                if next != usize::MAX && next >= cand {
                    break;
                }
                cand = next;
                chain += 1;
            }
        }
        if best.0 >= MIN_MATCH {
            out.push(Token::Copy {
                len: best.0 as u16,
                dist: best.1 as u16,
            });
            for q in p..p + best.0 {
                insert(q, &mut head, &mut prev);
            }
            p += best.0;
        } else {
            out.push(Token::Lit(data[p]));
            insert(p, &mut head, &mut prev);
            p += 1;
        }
    }
    out
}

/// Writes one dynamic-Huffman block of `toks`.
fn write_block(bits: &mut Bits, toks: &[Token], last: bool) {
    let mut lit_freq = vec![0u32; 286];
    let mut dist_freq = vec![0u32; 30];
    for t in toks {
        match *t {
            Token::Lit(b) => lit_freq[b as usize] += 1,
            Token::Copy { len, dist } => {
                lit_freq[257 + code_of(&LEN_BASE, len)] += 1;
                dist_freq[code_of(&DIST_BASE, dist)] += 1;
            }
        }
    }
    lit_freq[256] = 1;
    let lit_len = code_lengths(&lit_freq, 15);
    let dist_len = code_lengths(&dist_freq, 15);
    let nlit = 257.max(lit_len.iter().rposition(|&l| l > 0).map_or(0, |k| k + 1));
    let ndist = 1.max(dist_len.iter().rposition(|&l| l > 0).map_or(0, |k| k + 1));
    // The code lengths, run-length coded: (symbol, extra bits value, extra bit count).
    let all: Vec<u8> = lit_len[..nlit]
        .iter()
        .chain(&dist_len[..ndist])
        .copied()
        .collect();
    let mut rle: Vec<(u8, u32, u32)> = Vec::new();
    let mut k = 0;
    while k < all.len() {
        let l = all[k];
        let run = all[k..].iter().take_while(|&&x| x == l).count();
        if l == 0 && run >= 11 {
            let n = run.min(138);
            rle.push((18, (n - 11) as u32, 7));
            k += n;
        } else if l == 0 && run >= 3 {
            rle.push((17, (run - 3) as u32, 3));
            k += run;
        } else if l != 0 && run >= 4 {
            rle.push((l, 0, 0));
            let n = (run - 1).min(6);
            rle.push((16, (n - 3) as u32, 2));
            k += 1 + n;
        } else {
            rle.push((l, 0, 0));
            k += 1;
        }
    }
    let mut clen_freq = vec![0u32; 19];
    for &(s, _, _) in &rle {
        clen_freq[s as usize] += 1;
    }
    let clen_len = code_lengths(&clen_freq, 7);
    let clen_code = canonical(&clen_len);
    let nclen = 4.max(
        CLEN_ORDER
            .iter()
            .rposition(|&s| clen_len[s] > 0)
            .map_or(0, |k| k + 1),
    );
    bits.put(last as u32, 1);
    bits.put(2, 2);
    bits.put((nlit - 257) as u32, 5);
    bits.put((ndist - 1) as u32, 5);
    bits.put((nclen - 4) as u32, 4);
    for &s in &CLEN_ORDER[..nclen] {
        bits.put(clen_len[s] as u32, 3);
    }
    for &(s, v, n) in &rle {
        bits.code(clen_code[s as usize], clen_len[s as usize]);
        bits.put(v, n);
    }
    let lit_code = canonical(&lit_len);
    let dist_code = canonical(&dist_len);
    for t in toks {
        match *t {
            Token::Lit(b) => bits.code(lit_code[b as usize], lit_len[b as usize]),
            Token::Copy { len, dist } => {
                let lc = code_of(&LEN_BASE, len);
                bits.code(lit_code[257 + lc], lit_len[257 + lc]);
                bits.put((len - LEN_BASE[lc]) as u32, LEN_EXTRA[lc] as u32);
                let dc = code_of(&DIST_BASE, dist);
                bits.code(dist_code[dc], dist_len[dc]);
                bits.put((dist - DIST_BASE[dc]) as u32, DIST_EXTRA[dc] as u32);
            }
        }
    }
    bits.code(lit_code[256], lit_len[256]);
}

/// `data` as raw DEFLATE (no zlib or gzip header).
pub fn compress(data: &[u8]) -> Vec<u8> {
    let toks = tokens(data);
    let mut bits = Bits {
        out: Vec::with_capacity(data.len() / 4),
        acc: 0,
        n: 0,
    };
    let chunks: Vec<&[Token]> = toks.chunks(BLOCK_SYMBOLS).collect();
    if chunks.is_empty() {
        write_block(&mut bits, &[], true);
    }
    for (k, c) in chunks.iter().enumerate() {
        write_block(&mut bits, c, k + 1 == chunks.len());
    }
    bits.finish()
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let v = (c[0] as u32) << 16
            | (c.get(1).copied().unwrap_or(0) as u32) << 8
            | c.get(2).copied().unwrap_or(0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(ABC[(v >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Undoes the LZ77 step, to check the symbols say the input.
    fn unlz(toks: &[Token]) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        for t in toks {
            match *t {
                Token::Lit(b) => out.push(b),
                Token::Copy { len, dist } => {
                    for _ in 0..len {
                        out.push(out[out.len() - dist as usize]);
                    }
                }
            }
        }
        out
    }

    fn sample() -> Vec<u8> {
        let mut s = String::new();
        for k in 0..40_000 {
            s.push_str(&format!("  int i{k} = {k};\n"));
        }
        s.push_str("\u{e9}\0\x01 the end");
        s.into_bytes()
    }

    #[test]
    fn lz77_symbols_say_the_input_and_shrink_it() {
        let data = sample();
        let toks = tokens(&data);
        assert_eq!(unlz(&toks), data);
        assert!(toks.len() * 3 < data.len(), "{} symbols", toks.len());
        assert_eq!(unlz(&tokens(b"")), b"");
        assert_eq!(
            unlz(&tokens(b"aaaaaaaaaaaaaaaaaaaaaaaaa")),
            b"aaaaaaaaaaaaaaaaaaaaaaaaa"
        );
    }

    #[test]
    fn codes_are_complete_prefix_codes_within_the_limit() {
        // Skewed frequencies whose plain Huffman code is deeper than the limits.
        for (n, limit) in [(19, 7), (286, 15)] {
            let freq: Vec<u32> = (0..n)
                .map(|k| if k % 3 == 0 { 0 } else { 1 << (k % 24) })
                .collect();
            let wide: Vec<u64> = freq.iter().map(|&x| x as u64).collect();
            assert!(huffman(&wide).iter().any(|&l| l > limit));
            let lens = code_lengths(&freq, limit);
            assert!(lens.iter().all(|&l| l <= limit));
            // Kraft sum exactly 1: complete.
            let kraft: f64 = lens
                .iter()
                .filter(|&&l| l > 0)
                .map(|&l| 0.5f64.powi(l as i32))
                .sum();
            assert!((kraft - 1.0).abs() < 1e-9, "{kraft}");
        }
        assert_eq!(code_lengths(&[0, 5, 0], 15), vec![1, 1, 0]);
        assert_eq!(canonical(&[2, 1, 3, 3]), vec![0b10, 0b0, 0b110, 0b111]);
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }

    /// Python's zlib inflates the output back to the input, when Python is there
    /// (the browser test inflates real pages with Chromium's).
    #[test]
    fn zlib_inflates_it() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let data = sample();
        let packed = compress(&data);
        assert!(packed.len() * 4 < data.len(), "{} bytes", packed.len());
        let Ok(mut child) = Command::new("python3")
            .args([
                "-c",
                "import sys,zlib;sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read(),-15))",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            eprintln!("python3 is missing: not checked");
            return;
        };
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&packed));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success());
        assert!(out.stdout == data, "inflated {} bytes", out.stdout.len());
        let empty = compress(b"");
        assert!(!empty.is_empty());
    }
}
