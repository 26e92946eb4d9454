//! The linear algebra of Karr's analysis: the affine hull of the tuples a block's
//! parameters take, kept as a base point and a basis of directions, and the
//! relations every direction satisfies (the annihilator of the basis).
//!
//! Candidates only: the hull is computed over the rationals (integer rows,
//! fraction-free Gauss–Jordan elimination on `i128`), where the program computes
//! modulo 2^32. A relation found this way is proposed, never trusted: the caller
//! checks it modulo 2^32 on every edge before using it. Entries that would outgrow
//! [`LIMIT`] abandon the block (no relations).

/// Largest magnitude kept in a row; beyond it the elimination gives up.
const LIMIT: i128 = 1 << 62;

/// The arithmetic left the bounds where it is exact.
#[derive(Debug, PartialEq, Eq)]
pub struct Overflow;

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Divides `row` by the gcd of its entries and makes its first nonzero entry positive.
fn normalise(row: &mut [i128]) {
    let g = row.iter().fold(0, |g, &x| gcd(g, x));
    let sign = match row.iter().find(|&&x| x != 0) {
        Some(&x) if x < 0 => -1,
        _ => 1,
    };
    if g > 1 || sign < 0 {
        for x in row.iter_mut() {
            *x = *x / g * sign;
        }
    }
}

/// `a * row_a - b * row_b`, checked.
fn combine(a: i128, row_a: &[i128], b: i128, row_b: &[i128]) -> Result<Vec<i128>, Overflow> {
    row_a
        .iter()
        .zip(row_b)
        .map(|(&x, &y)| {
            let v = a
                .checked_mul(x)
                .zip(b.checked_mul(y))
                .and_then(|(p, q)| p.checked_sub(q))
                .ok_or(Overflow)?;
            if v.abs() > LIMIT {
                Err(Overflow)
            } else {
                Ok(v)
            }
        })
        .collect()
}

/// A subspace of Q^k, as rows in reduced echelon form (each pivot column is zero in
/// every other row).
#[derive(Clone, Debug)]
pub struct Span {
    k: usize,
    rows: Vec<(usize, Vec<i128>)>,
}

impl Span {
    /// The zero subspace of Q^k.
    pub fn new(k: usize) -> Span {
        Span {
            k,
            rows: Vec::new(),
        }
    }

    /// Its dimension.
    pub fn rank(&self) -> usize {
        self.rows.len()
    }

    /// The basis rows.
    pub fn rows(&self) -> impl Iterator<Item = &[i128]> {
        self.rows.iter().map(|(_, r)| &r[..])
    }

    /// Adds `d` to the span; whether the span grew.
    pub fn insert(&mut self, d: &[i128]) -> Result<bool, Overflow> {
        debug_assert_eq!(d.len(), self.k);
        let mut d = d.to_vec();
        for (p, row) in &self.rows {
            if d[*p] != 0 {
                d = combine(row[*p], &d, d[*p], row)?;
                normalise(&mut d);
            }
        }
        let Some(p) = d.iter().position(|&x| x != 0) else {
            return Ok(false);
        };
        normalise(&mut d);
        for (_, row) in self.rows.iter_mut() {
            if row[p] != 0 {
                *row = combine(d[p], row, row[p], &d)?;
                normalise(row);
            }
        }
        self.rows.push((p, d));
        Ok(true)
    }

    /// A basis of the integer vectors `c` with `c · d = 0` for every `d` in the span,
    /// each with coprime entries.
    pub fn annihilator(&self) -> Result<Vec<Vec<i128>>, Overflow> {
        let mut basis = Vec::new();
        for free in 0..self.k {
            if self.rows.iter().any(|(p, _)| *p == free) {
                continue;
            }
            // x[free] = L, x[p] = -row[free] * L / row[p] for each row; L makes
            // every x[p] an integer.
            let mut l: i128 = 1;
            for (p, row) in &self.rows {
                if row[free] != 0 {
                    let m = row[*p].abs();
                    l = (l / gcd(l, m)).checked_mul(m).ok_or(Overflow)?;
                    if l > LIMIT {
                        return Err(Overflow);
                    }
                }
            }
            let mut x = vec![0i128; self.k];
            x[free] = l;
            for (p, row) in &self.rows {
                if row[free] != 0 {
                    x[*p] = -row[free].checked_mul(l / row[*p]).ok_or(Overflow)?;
                }
            }
            normalise(&mut x);
            basis.push(x);
        }
        Ok(basis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[i128], b: &[i128]) -> i128 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn annihilator_of_a_line() {
        // Two counters stepping by 1 and 2: the direction (1, 2); relation 2x - y.
        let mut s = Span::new(2);
        assert_eq!(s.insert(&[1, 2]), Ok(true));
        assert_eq!(s.insert(&[-3, -6]), Ok(false));
        let a = s.annihilator().unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(dot(&a[0], &[1, 2]), 0);
        assert_eq!(a[0].iter().map(|x| x.abs()).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn annihilator_of_swaps() {
        // (a, b, x, y) -> (b, a, y, x) from x = a + 1, y = b + 1: the direction
        // (1, -1, 1, -1); relations include x - a and y - b.
        let mut s = Span::new(4);
        s.insert(&[1, -1, 1, -1]).unwrap();
        let a = s.annihilator().unwrap();
        assert_eq!(a.len(), 3);
        for c in &a {
            assert_eq!(dot(c, &[1, -1, 1, -1]), 0);
        }
        // x - a is in the span of the annihilator: rank stays 3 when added.
        let mut ann = Span::new(4);
        for c in &a {
            ann.insert(c).unwrap();
        }
        assert_eq!(ann.insert(&[-1, 0, 1, 0]), Ok(false));
    }

    #[test]
    fn full_span_has_no_relations() {
        let mut s = Span::new(3);
        s.insert(&[1, 0, 0]).unwrap();
        s.insert(&[1, 1, 0]).unwrap();
        s.insert(&[5, 7, 3]).unwrap();
        assert_eq!(s.rank(), 3);
        assert!(s.annihilator().unwrap().is_empty());
    }

    #[test]
    fn reduced_rows_give_integral_relations() {
        // Directions (2, 3, 0) and (0, 5, 7): the relation is orthogonal to both.
        let mut s = Span::new(3);
        s.insert(&[2, 3, 0]).unwrap();
        s.insert(&[0, 5, 7]).unwrap();
        let a = s.annihilator().unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(dot(&a[0], &[2, 3, 0]), 0);
        assert_eq!(dot(&a[0], &[0, 5, 7]), 0);
        assert_eq!(a[0].iter().fold(0, |g, &x| gcd(g, x)), 1);
    }

    #[test]
    fn overflow_is_reported() {
        let mut s = Span::new(2);
        s.insert(&[1 << 61, 3]).unwrap();
        assert_eq!(s.insert(&[3, 1 << 61]), Err(Overflow));
    }
}
