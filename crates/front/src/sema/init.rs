//! Initialiser-list normalisation with C's brace elision (C11 6.7.9 p17-p21).
//!
//! An array of shape `[d0][d1]...[dn-1]` is initialised from a brace list element by
//! element (each element a sub-array of shape `[d1]...`, or a scalar at the last level):
//!
//! * an element whose initialiser begins with `{` is initialised by that whole list
//!   (recursively; surplus items in it are an error);
//! * otherwise (brace elision) the element takes only as many items from the *current*
//!   list as it needs, descending level by level, and the rest continue with the next
//!   element of the enclosing aggregate;
//! * a scalar element given a braced list takes its first item (C's "braces around
//!   scalar initializer").
//!
//! Consequently a nested `{...}` always starts at the next element boundary of the
//! innermost aggregate being filled. Missing elements are zero. The result is a flat,
//! row-major, sparse list of `(index, expression)` in increasing index order; work is
//! proportional to the number of items written, never to the array size.

use crate::ast::{Expr, InitVal};
use crate::diag::Diagnostics;

/// Normalises the brace list `items` for an array with dimensions `dims`. Reports
/// excess items (and stops placing them); returns the placed elements.
pub fn normalise<'a>(
    items: &'a [InitVal],
    dims: &[u32],
    diags: &mut Diagnostics,
) -> Vec<(u32, &'a Expr)> {
    let mut strides = vec![1u64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * u64::from(dims[k + 1]);
    }
    let mut n = Normaliser {
        dims,
        strides,
        out: Vec::new(),
        diags,
    };
    if !dims.is_empty() {
        n.braced(items, 0, 0);
    }
    n.out
}

/// The initialiser of a scalar given as a braced list (`int x = {1};`): its first item
/// (recursively), or `None` for `{}` (zero). Surplus items are reported.
pub fn scalar_from_list<'a>(items: &'a [InitVal], diags: &mut Diagnostics) -> Option<&'a Expr> {
    let mut items = items;
    loop {
        if let Some(extra) = items.get(1) {
            diags.error("excess elements in scalar initialiser", extra.span());
        }
        match items.first() {
            None => return None,
            Some(InitVal::Expr(e)) => return Some(e),
            Some(InitVal::List(inner, _)) => items = inner,
        }
    }
}

struct Normaliser<'a, 'd> {
    dims: &'d [u32],
    strides: Vec<u64>,
    out: Vec<(u32, &'a Expr)>,
    diags: &'d mut Diagnostics,
}

impl<'a, 'd> Normaliser<'a, 'd> {
    /// Initialises the sub-array at `level` starting at flat index `base` from a whole
    /// braced list.
    fn braced(&mut self, items: &'a [InitVal], level: usize, base: u64) {
        let used = self.elided(items, 0, level, base);
        if let Some(extra) = items.get(used) {
            self.diags
                .error("excess elements in array initialiser", extra.span());
        }
    }

    /// Initialises the sub-array at `level` / `base` from `items[it..]`, taking only as
    /// many items as it needs; returns the index of the first item not used.
    fn elided(&mut self, items: &'a [InitVal], mut it: usize, level: usize, base: u64) -> usize {
        let n = u64::from(self.dims[level]);
        let stride = self.strides[level];
        let last = level + 1 == self.dims.len();
        let mut i = 0;
        while i < n && it < items.len() {
            let pos = base + i * stride;
            match &items[it] {
                InitVal::Expr(e) if last => {
                    self.out.push((pos as u32, e));
                    it += 1;
                }
                InitVal::List(l, _) if last => {
                    if let Some(e) = scalar_from_list(l, self.diags) {
                        self.out.push((pos as u32, e));
                    }
                    it += 1;
                }
                InitVal::List(l, _) => {
                    self.braced(l, level + 1, pos);
                    it += 1;
                }
                InitVal::Expr(_) => {
                    if stride == 0 {
                        // A zero-sized element can take no scalar.
                        break;
                    }
                    it = self.elided(items, it, level + 1, pos);
                }
            }
            i += 1;
        }
        it
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::ExprKind;
    use crate::span::Span;

    /// Builds an initialiser from a compact notation: digits are int items, `{`/`}`
    /// lists, `,` and spaces separate.
    fn parse(s: &str) -> Vec<InitVal> {
        fn list(b: &[u8], i: &mut usize) -> Vec<InitVal> {
            let mut v = Vec::new();
            while *i < b.len() {
                match b[*i] {
                    b'{' => {
                        *i += 1;
                        let l = list(b, i);
                        v.push(InitVal::List(l, Span::default()));
                        continue;
                    }
                    b'}' => {
                        *i += 1;
                        return v;
                    }
                    b'0'..=b'9' => {
                        let mut x = 0;
                        while *i < b.len() && b[*i].is_ascii_digit() {
                            x = x * 10 + i32::from(b[*i] - b'0');
                            *i += 1;
                        }
                        v.push(InitVal::Expr(Expr {
                            kind: ExprKind::IntLit(x),
                            span: Span::default(),
                        }));
                        continue;
                    }
                    _ => {}
                }
                *i += 1;
            }
            v
        }
        let b = s.as_bytes();
        let mut i = 1; // skip the outer `{`
        list(b, &mut i)
    }

    /// The dense layout (0 for missing) of `init` for `dims`, and the error count.
    fn layout(init: &str, dims: &[u32]) -> (Vec<i32>, usize) {
        let items = parse(init);
        let mut d = Diagnostics::default();
        let flat = normalise(&items, dims, &mut d);
        let total: u32 = dims.iter().product();
        let mut dense = vec![0; total as usize];
        let mut last = None;
        for (i, e) in flat {
            assert!(last < Some(i), "indices must increase");
            last = Some(i);
            if let ExprKind::IntLit(v) = e.kind {
                dense[i as usize] = v;
            }
        }
        (dense, d.len())
    }

    // Expected layouts are what gcc gives for the same C declarations.

    #[test]
    fn flat_and_fully_braced() {
        assert_eq!(
            layout("{1, 2, 3, 4, 5, 6, 7, 8}", &[4, 2]),
            (vec![1, 2, 3, 4, 5, 6, 7, 8], 0)
        );
        assert_eq!(
            layout("{{1, 2}, {3, 4}, {5, 6}, {7, 8}}", &[4, 2]),
            (vec![1, 2, 3, 4, 5, 6, 7, 8], 0)
        );
        assert_eq!(layout("{}", &[4, 2]), (vec![0; 8], 0));
    }

    #[test]
    fn mixed_elision() {
        // int d[4][2] = {1, 2, {3}, {5}, 7, 8};
        assert_eq!(
            layout("{1, 2, {3}, {5}, 7, 8}", &[4, 2]),
            (vec![1, 2, 3, 0, 5, 0, 7, 8], 0)
        );
        // int a[4][2] = {{1, 2}, {3, 4}, {}, 7};
        assert_eq!(
            layout("{{1, 2}, {3, 4}, {}, 7}", &[4, 2]),
            (vec![1, 2, 3, 4, 0, 0, 7, 0], 0)
        );
        // int c[2][8] = {{0, 9}, 8, 3};
        let mut want = vec![0; 16];
        want[1] = 9;
        want[8] = 8;
        want[9] = 3;
        assert_eq!(layout("{{0, 9}, 8, 3}", &[2, 8]), (want, 0));
        // int g[5][3] = {1, 2, 3, {4}, {7}, 10, 11, 12};
        assert_eq!(
            layout("{1, 2, 3, {4}, {7}, 10, 11, 12}", &[5, 3]),
            (vec![1, 2, 3, 4, 0, 0, 7, 0, 0, 10, 11, 12, 0, 0, 0], 0)
        );
    }

    #[test]
    fn three_dimensions() {
        // int a[2][2][3] = {1, 2, 3, 4, {5}, 6, {7, 8}};
        // 1..4 elide into a[0][0] = {1,2,3}, a[0][1][0] = 4; {5} is the scalar
        // a[0][1][1]; 6 -> a[0][1][2]; {7, 8} is the whole a[1][0].
        assert_eq!(
            layout("{1, 2, 3, 4, {5}, 6, {7, 8}}", &[2, 2, 3]),
            (vec![1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0], 0)
        );
        // int b[2][2][2] = {{1, {2}}, 3};  {1,{2}} is b[0]: b[0][0] = {1, 0} by
        // elision would take 1 and then {2} as the scalar b[0][0][1].
        assert_eq!(
            layout("{{1, {2}}, 3}", &[2, 2, 2]),
            (vec![1, 2, 0, 0, 3, 0, 0, 0], 0)
        );
        // int c[2][3][2] = {{1}, 2, 3, {4, 5}};  {1} -> c[0]; 2, 3 -> c[1][0];
        // {4, 5} -> c[1][1].
        assert_eq!(
            layout("{{1}, 2, 3, {4, 5}}", &[2, 3, 2]),
            (vec![1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 0, 0], 0)
        );
    }

    #[test]
    fn excess_elements() {
        assert_eq!(layout("{1, 2, 3}", &[2]).1, 1);
        assert_eq!(layout("{{1, 2, 3}}", &[2, 2]).1, 1);
        assert_eq!(layout("{1, 2, 3, 4, 5}", &[2, 2]).1, 1);
        assert_eq!(layout("{{1}, {2}, {3}}", &[2, 2]).1, 1);
        assert_eq!(layout("{{1, 2}}", &[2]).1, 1); // excess in scalar braces
    }

    #[test]
    fn huge_arrays_cost_nothing() {
        let items = parse("{{1}, {}, 3}");
        let mut d = Diagnostics::default();
        let flat = normalise(&items, &[1 << 14, 1 << 14], &mut d);
        let idx: Vec<u32> = flat.iter().map(|p| p.0).collect();
        assert_eq!(idx, vec![0, 2 << 14]);
        assert!(d.is_empty());
    }
}
