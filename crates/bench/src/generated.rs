//! The generated programs of `bench scaling` (and of the compile-time test of
//! `sysyc`): families of SysY programs that each grow along one axis (statements
//! in a block, branches in a loop body, functions, loop depth, sequential loops,
//! call-graph depth, condition and chain length, initialiser size). What they
//! compute depends on input (`getint()`), which keeps the optimiser from folding
//! them away.

use std::fmt::Write as _;

/// One axis along which the programs grow.
pub struct Dimension {
    /// Name used on the command line and in the table.
    pub name: &'static str,
    /// What grows.
    pub what: &'static str,
    /// Size at 1x.
    pub base: usize,
    /// Largest scale factor of a default run: the largest power of 4 up to 64
    /// whose program stays within the 0.5 MB.
    pub top: usize,
    /// The program of size `n`.
    pub generate: fn(usize) -> String,
}

/// Every dimension, in table order.
pub const DIMENSIONS: &[Dimension] = &[
    Dimension {
        name: "stmts",
        what: "statements in one block",
        base: 500,
        top: 16,
        generate: straight_line,
    },
    Dimension {
        name: "branches",
        what: "if/else statements in one loop body",
        base: 500,
        top: 16,
        generate: branches_in_loop,
    },
    Dimension {
        name: "functions",
        what: "small functions, each calling two earlier ones",
        base: 400,
        top: 16,
        generate: many_functions,
    },
    Dimension {
        name: "depth",
        what: "nested loops of two iterations",
        base: 10,
        top: 64,
        generate: nested_counted_loops,
    },
    Dimension {
        name: "while-depth",
        what: "nested while loops with unknown trip counts",
        base: 60,
        top: 64,
        generate: nested_while_loops,
    },
    Dimension {
        name: "loops",
        what: "loops one after another",
        base: 125,
        top: 16,
        generate: sequential_loops,
    },
    Dimension {
        name: "sum-loops",
        what: "down-counting sum loops one after another (closed forms)",
        base: 125,
        top: 64,
        generate: sequential_sum_loops,
    },
    Dimension {
        name: "call-depth",
        what: "a chain of functions, each calling the next",
        base: 400,
        top: 16,
        generate: call_chain,
    },
    Dimension {
        name: "condition",
        what: "terms of one || condition",
        base: 1000,
        top: 16,
        generate: long_condition,
    },
    Dimension {
        name: "else-if",
        what: "arms of one else-if chain on one value",
        base: 1000,
        top: 16,
        generate: else_if_chain,
    },
    Dimension {
        name: "array-stores",
        what: "stores to elements of one global array in one block",
        base: 1250,
        top: 16,
        generate: array_stores,
    },
    Dimension {
        name: "local-init",
        what: "elements in a local array's initialiser",
        base: 6250,
        top: 16,
        generate: local_initialiser,
    },
    Dimension {
        name: "global-init",
        what: "elements in a global array's initialiser",
        base: 6250,
        top: 16,
        generate: global_initialiser,
    },
];

/// `n` statements in one basic block, each using the previous ones' results.
pub fn straight_line(n: usize) -> String {
    let mut s = String::from("int main() {\n  int a = getint();\n  int b = getint();\n");
    for k in 0..n {
        match k % 4 {
            0 => writeln!(s, "  a = a * {} + b;", k % 13 + 2),
            1 => writeln!(s, "  b = b - a / {};", k % 7 + 3),
            2 => writeln!(s, "  a = a + (b % {}) * {};", k % 11 + 5, k % 5 + 1),
            _ => writeln!(s, "  b = b + a - {};", k),
        }
        .unwrap();
    }
    s.push_str("  putint(a + b);\n  return 0;\n}\n");
    s
}

/// One loop whose body holds `n` two-way branches.
pub fn branches_in_loop(n: usize) -> String {
    let mut s = String::from("int main() {\n  int n = getint();\n  int s = 0;\n  int i = 0;\n");
    s.push_str("  while (i < n) {\n");
    for k in 0..n {
        let m = k + 2;
        writeln!(s, "    if (i % {m} == 0) s = s + {m}; else s = s - i;").unwrap();
    }
    s.push_str("    i = i + 1;\n  }\n  putint(s);\n  return 0;\n}\n");
    s
}

/// `if (x == 0) ... else if (x == k) y = k mod 10; ...` with `n` arms.
pub fn else_if_chain(n: usize) -> String {
    let mut s =
        String::from("int main() {\n  int x = getint();\n  int y = 0;\n  if (x == 0) y = 1;\n");
    for k in 1..n {
        writeln!(s, "  else if (x == {k}) y = {};", k % 10).unwrap();
    }
    s.push_str("  putint(y);\n  return 0;\n}\n");
    s
}

/// `n` statements `a[k] = a[7k mod n] + x` in one block: stores and loads at
/// constant indices of one global array.
pub fn array_stores(n: usize) -> String {
    let mut s = format!("int a[{}];\nint main() {{\n  int x = getint();\n", n + 1);
    for k in 0..n {
        writeln!(s, "  a[{k}] = a[{}] + x;", (k * 7) % n).unwrap();
    }
    s.push_str("  putint(a[x]);\n  return 0;\n}\n");
    s
}

/// One `if` whose condition is `n` terms joined by `||`, each an `&&` of two
/// comparisons: a chain of `2n` short-circuit tests, all branching to one join.
pub fn long_condition(n: usize) -> String {
    let mut s = String::from("int main() {\n  int x = getint();\n  int y = 0;\n  if (x == 0");
    for k in 0..n {
        write!(s, "\n      || x > {} && x < {}", 3 * k + 1, 3 * k + 3).unwrap();
    }
    s.push_str(")\n    y = 1;\n  putint(y);\n  return 0;\n}\n");
    s
}

/// `n` three-line functions; function `k` calls functions `k - 1` and `k / 2`.
pub fn many_functions(n: usize) -> String {
    let mut s = String::from("int f0(int x) {\n  return x * 3 + 1;\n}\n");
    for k in 1..n {
        writeln!(
            s,
            "int f{k}(int x) {{ int y = f{}(x + {k}); return y - f{}(y / 2); }}",
            k - 1,
            k / 2
        )
        .unwrap();
    }
    writeln!(
        s,
        "int main() {{\n  putint(f{}(getint()));\n  return 0;\n}}",
        n - 1
    )
    .unwrap();
    s
}

/// `n` nested counted loops of two iterations each around one statement.
pub fn nested_counted_loops(n: usize) -> String {
    let mut s = String::from("int main() {\n  int s = getint();\n");
    for k in 0..n {
        writeln!(s, "  int i{k} = 0;\n  while (i{k} < 2) {{").unwrap();
    }
    s.push_str("  s = s * 3 + 1;\n");
    for k in (0..n).rev() {
        writeln!(s, "  i{k} = i{k} + 1;\n  }}").unwrap();
    }
    s.push_str("  putint(s);\n  return 0;\n}\n");
    s
}

/// `n` nested while loops whose conditions depend on input.
pub fn nested_while_loops(n: usize) -> String {
    let mut s = String::from("int main() {\n  int x = getint();\n  int s = 0;\n");
    for k in 0..n {
        writeln!(s, "  while (x > {k}) {{\n  x = x - 1;\n  s = s + {k};").unwrap();
    }
    for _ in 0..n {
        s.push_str("  }\n");
    }
    s.push_str("  putint(s);\n  return 0;\n}\n");
    s
}

/// `n` loops one after another, each reading an array the previous one wrote.
pub fn sequential_loops(n: usize) -> String {
    let mut s = String::from("int a[100];\nint main() {\n  int n = getint();\n  int s = 0;\n");
    for k in 0..n {
        writeln!(
            s,
            "  int i{k} = 0;\n  while (i{k} < n) {{\n    a[i{k}] = a[i{k}] + s * {};\n    s = s + i{k};\n    i{k} = i{k} + 1;\n  }}",
            k % 9 + 1
        )
        .unwrap();
    }
    s.push_str("  putint(s + a[0]);\n  return 0;\n}\n");
    s
}

/// `n` down-counting loops one after another, each summing a multiple of its
/// counter (a closed form under a guard) and leaving it for the next.
pub fn sequential_sum_loops(n: usize) -> String {
    let mut s =
        String::from("int main() {\n  int a = getint();\n  int d = getint();\n  int s = 0;\n");
    for k in 0..n {
        let (bound, c) = (k % 7, k % 13 + 1);
        writeln!(
            s,
            "  while (a > {bound}) {{ s = s + a * {c}; a = a - 1; }} a = a + d;"
        )
        .unwrap();
    }
    s.push_str("  putint(s);\n  return 0;\n}\n");
    s
}

/// A chain of `n` functions, each calling the next once.
pub fn call_chain(n: usize) -> String {
    let mut s = format!("int g{}(int x) {{\n  return x + 1;\n}}\n", n - 1);
    for k in (0..n - 1).rev() {
        writeln!(
            s,
            "int g{k}(int x) {{\n  if (x > {k}) return g{}(x * 3 - {k});\n  return x;\n}}",
            k + 1
        )
        .unwrap();
    }
    s.push_str("int main() {\n  putint(g0(getint()));\n  return 0;\n}\n");
    s
}

fn initialiser_list(n: usize) -> String {
    let mut s = String::with_capacity(n * 6);
    for k in 0..n {
        if k > 0 {
            s.push_str(if k % 16 == 0 { ",\n" } else { ", " });
        }
        // Mostly small values, some zeros, a few large ones.
        let v = (k * 7919) % 1000;
        write!(s, "{}", if v < 100 { 0 } else { v * (k % 3 + 1) }).unwrap();
    }
    s
}

/// A local array with an `n`-element initialiser, read at input-given indices.
pub fn local_initialiser(n: usize) -> String {
    format!(
        "int main() {{\n  int a[{n}] = {{{}}};\n  int k = getint();\n  int s = 0;\n  while (k > 0) {{\n    s = s + a[getint() % {n}];\n    k = k - 1;\n  }}\n  putint(s);\n  return 0;\n}}\n",
        initialiser_list(n)
    )
}

/// A global array with an `n`-element initialiser, read at input-given indices.
pub fn global_initialiser(n: usize) -> String {
    format!(
        "int a[{n}] = {{{}}};\nint main() {{\n  int k = getint();\n  int s = 0;\n  while (k > 0) {{\n    s = s + a[getint() % {n}];\n    k = k - 1;\n  }}\n  putint(s);\n  return 0;\n}}\n",
        initialiser_list(n)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every generator makes a valid SysY program, and its source grows about
    /// linearly with `n` (so the table's ratios measure the compiler, not the
    /// generator).
    #[test]
    fn generators_make_valid_programs_that_grow_linearly() {
        for dim in DIMENSIONS {
            let small = (dim.generate)(dim.base.min(40));
            if let Err(d) = front::check(dim.name, &small) {
                panic!(
                    "{}: generated program is not valid:\n{d:?}\n{small}",
                    dim.name
                );
            }
            let one = (dim.generate)(dim.base).len() as f64;
            let four = (dim.generate)(4 * dim.base).len() as f64;
            let growth = four / one;
            assert!(
                (3.5..=4.5).contains(&growth),
                "{}: source grows {growth:.2}x for 4x n",
                dim.name
            );
        }
    }

    /// The programs at each dimension's top factor stay within the issue's
    /// 0.5 MB bound, and the next factor would not (unless the top is 64x).
    #[test]
    fn largest_programs_are_at_most_half_a_megabyte() {
        for dim in DIMENSIONS {
            let bytes = (dim.generate)(dim.top * dim.base).len();
            assert!(bytes <= 512 * 1024, "{}: {bytes} bytes", dim.name);
            if dim.top < 64 {
                let next = (dim.generate)(4 * dim.top * dim.base).len();
                assert!(
                    next > 512 * 1024,
                    "{}: {next} bytes at {}x",
                    dim.name,
                    4 * dim.top
                );
            }
        }
    }
}
