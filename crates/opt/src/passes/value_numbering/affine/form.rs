//! Affine forms over the integers modulo 2^32: `k + c1*a1 + … + cn*an`, where the
//! atoms `ai` are SSA values the analysis does not look into (loads, calls,
//! parameters, products of two unknowns, …) and the coefficients and constant are
//! `u32` with wrapping arithmetic — exactly SysY's `int` addition, subtraction and
//! multiplication by a constant, whatever overflows.
//!
//! A form is canonical (terms sorted by atom, no zero coefficient), so two values
//! with equal forms are equal, and forms can be hashed.

use ir::Value;
use smallvec::SmallVec;

/// Most terms a form may have; a value whose form would have more is an atom
/// itself (keeps the analysis linear on long sums).
pub const MAX_TERMS: usize = 8;

/// `k + Σ coeff·atom` modulo 2^32.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Form {
    pub k: u32,
    /// Sorted by atom; coefficients nonzero.
    pub terms: SmallVec<[(Value, u32); 4]>,
}

impl Form {
    /// The constant `k`.
    pub fn constant(k: u32) -> Form {
        Form {
            k,
            terms: SmallVec::new(),
        }
    }

    /// The atom `v` itself.
    pub fn atom(v: Value) -> Form {
        let mut terms = SmallVec::new();
        terms.push((v, 1));
        Form { k: 0, terms }
    }

    /// The constant, when the form has no terms.
    pub fn as_constant(&self) -> Option<u32> {
        self.terms.is_empty().then_some(self.k)
    }

    /// The atom, when the form is exactly one atom.
    pub fn as_atom(&self) -> Option<Value> {
        match self.terms[..] {
            [(v, 1)] if self.k == 0 => Some(v),
            _ => None,
        }
    }

    /// The coefficient of `atom` (0 when absent).
    pub fn coeff(&self, atom: Value) -> u32 {
        self.terms
            .binary_search_by_key(&atom, |t| t.0)
            .map_or(0, |i| self.terms[i].1)
    }

    /// `self + m * other`.
    pub fn add_scaled(&self, other: &Form, m: u32) -> Form {
        let mut terms = SmallVec::with_capacity(self.terms.len() + other.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            let take_left = j == other.terms.len()
                || (i < self.terms.len() && self.terms[i].0 < other.terms[j].0);
            let take_right = i == self.terms.len()
                || (j < other.terms.len() && other.terms[j].0 < self.terms[i].0);
            let (atom, c) = if take_left {
                i += 1;
                self.terms[i - 1]
            } else if take_right {
                j += 1;
                (other.terms[j - 1].0, other.terms[j - 1].1.wrapping_mul(m))
            } else {
                i += 1;
                j += 1;
                let c = self.terms[i - 1]
                    .1
                    .wrapping_add(other.terms[j - 1].1.wrapping_mul(m));
                (self.terms[i - 1].0, c)
            };
            if c != 0 {
                terms.push((atom, c));
            }
        }
        Form {
            k: self.k.wrapping_add(other.k.wrapping_mul(m)),
            terms,
        }
    }

    /// `self + other`.
    pub fn add(&self, other: &Form) -> Form {
        self.add_scaled(other, 1)
    }

    /// `self - other`.
    pub fn sub(&self, other: &Form) -> Form {
        self.add_scaled(other, u32::MAX)
    }

    /// `m * self`.
    pub fn scale(&self, m: u32) -> Form {
        Form::default().add_scaled(self, m)
    }

    /// The form with every atom `a` for which `subst(a)` is `Some(g)` replaced by `g`.
    pub fn substitute(&self, subst: impl Fn(Value) -> Option<Form>) -> Form {
        let mut out = Form::constant(self.k);
        for &(a, c) in &self.terms {
            match subst(a) {
                Some(g) => out = out.add_scaled(&g, c),
                None => out = out.add_scaled(&Form::atom(a), c),
            }
        }
        out
    }

    /// Whether the form is small enough to keep.
    pub fn fits(&self) -> bool {
        self.terms.len() <= MAX_TERMS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::EntityRef;

    fn v(i: usize) -> Value {
        Value::new(i)
    }

    #[test]
    fn arithmetic_is_modulo_two_to_the_32() {
        let x = Form::atom(v(1));
        let y = Form::atom(v(2));
        // (x + 1) + 1 == x + 2
        let a = x.add(&Form::constant(1)).add(&Form::constant(1));
        assert_eq!(a, x.add(&Form::constant(2)));
        // x + y == y + x, and (x + y) - y == x
        assert_eq!(x.add(&y), y.add(&x));
        assert_eq!(x.add(&y).sub(&y).as_atom(), Some(v(1)));
        // 2 * x == x + x; x * 2^31 * 2 == 0 (wraps)
        assert_eq!(x.scale(2), x.add(&x));
        assert_eq!(x.scale(1 << 31).scale(2).as_constant(), Some(0));
        // i32::MAX + 1 wraps to i32::MIN
        assert_eq!(
            Form::constant(i32::MAX as u32).add(&Form::constant(1)).k,
            i32::MIN as u32
        );
    }

    #[test]
    fn terms_stay_sorted_and_nonzero() {
        let f = Form::atom(v(5))
            .add(&Form::atom(v(2)).scale(3))
            .add(&Form::atom(v(9)));
        assert_eq!(
            f.terms.iter().map(|t| t.0).collect::<Vec<_>>(),
            [v(2), v(5), v(9)]
        );
        let g = f.sub(&Form::atom(v(5)));
        assert_eq!(g.coeff(v(5)), 0);
        assert_eq!(g.terms.len(), 2);
        assert_eq!(g.coeff(v(2)), 3);
    }

    #[test]
    fn substitution_replaces_atoms() {
        // 2*p + q with p := q + 1 gives 3*q + 2.
        let (p, q) = (v(1), v(2));
        let f = Form::atom(p).scale(2).add(&Form::atom(q));
        let g = f.substitute(|a| (a == p).then(|| Form::atom(q).add(&Form::constant(1))));
        assert_eq!(g, Form::atom(q).scale(3).add(&Form::constant(2)));
    }
}
