//! Printing a generated [`Program`] as SysY source (which, with the runtime prelude
//! and `const int`s rewritten as enumerators, is also C with the same meaning).
//!
//! Binary operations are fully parenthesised, negative literals too (`x - (-5)`),
//! and `INT_MIN` is spelled `(-2147483647 - 1)`: C reads `-2147483648` as a `long`.
//! Literal spellings vary with the value (decimal, hex, octal; decimal or hex floats)
//! so the lexers see every form, deterministically.
//!
//! The printer adds what keeps floats bounded (see [`crate::bounds`]): a store whose
//! value may exceed the bound is clamped, through the per-function temporary
//! [`FLOAT_TEMP`] when the place is an array element (whose index must be evaluated
//! once) or an `int`; float parameters are clamped on entry.

use crate::ast::*;
use crate::bounds::{needs_clamp, FLOAT_STORE_LITERAL};
use std::fmt::Write;

/// The float temporary every function declares for clamped stores.
pub const FLOAT_TEMP: &str = "tf";

/// The program as SysY text.
pub fn print_program(p: &Program) -> String {
    let mut out = Printer::default();
    for g in &p.globals {
        out.decl(g);
    }
    for f in &p.funcs {
        out.line("");
        out.func(f);
    }
    out.text
}

/// An expression as SysY text.
pub fn print_expr(e: &Expr) -> String {
    let mut s = String::new();
    expr(&mut s, e);
    s
}

#[derive(Default)]
struct Printer {
    text: String,
    indent: usize,
    /// The current function's return type.
    ret: Option<Ty>,
}

impl Printer {
    fn line(&mut self, s: &str) {
        if !s.is_empty() {
            for _ in 0..self.indent {
                self.text.push_str("    ");
            }
        }
        self.text.push_str(s);
        self.text.push('\n');
    }

    fn func(&mut self, f: &Func) {
        self.ret = f.ret;
        let params: Vec<String> = f.params.iter().map(param).collect();
        let ret = f.ret.map_or("void", Ty::name);
        self.open(&format!("{ret} {}({}) ", f.name, params.join(", ")));
        self.line(&format!("float {FLOAT_TEMP} = 0.0;"));
        for p in &f.params {
            if p.array.is_none() && p.ty == Ty::Float {
                self.clamp_var(&p.name);
            }
        }
        if let Some(r) = &f.recursion {
            self.open(&format!("if ({0} <= 0 || {0} > {1}) ", r.depth, r.limit));
            self.ret_stmt(r.base.as_ref());
            self.close("}");
        }
        self.stmts(&f.body);
        if let Some(e) = &f.tail {
            self.ret_stmt(Some(e));
        }
        self.close("}");
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    /// Prints `header {` and indents.
    fn open(&mut self, header: &str) {
        self.line(&format!("{header}{{"));
        self.indent += 1;
    }

    /// Unindents and prints `line` (`}` or `} else {`).
    fn close(&mut self, line: &str) {
        self.indent -= 1;
        self.line(line);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl(d) => self.decl(d),
            Stmt::Assign { target, value } => self.assign(target, value),
            Stmt::Call(c) => self.line(&format!("{};", call(c))),
            Stmt::If { cond, then, els } => {
                self.open(&format!("if ({}) ", print_expr(cond)));
                self.stmts(then);
                if let Some(e) = els {
                    self.close("} else {");
                    self.indent += 1;
                    self.stmts(e);
                }
                self.close("}");
            }
            Stmt::Loop {
                var,
                start,
                end,
                step,
                cond,
                body,
            } => {
                self.line(&format!("int {var} = {};", int_lit(*start)));
                let cmp = if *step > 0 { "<" } else { ">" };
                let extra = cond
                    .as_ref()
                    .map(|c| format!(" && {}", print_expr(c)))
                    .unwrap_or_default();
                self.open(&format!("while ({var} {cmp} {}{extra}) ", int_lit(*end)));
                self.stmts(body);
                self.line(&format!("{var} = {var} + {};", int_lit(*step)));
                self.close("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue { var, step } => self.line(&format!(
                "{{ {var} = {var} + {}; continue; }}",
                int_lit(*step)
            )),
            Stmt::Return(e) => self.ret_stmt(e.as_ref()),
            Stmt::Block(b) => {
                self.open("");
                self.stmts(b);
                self.close("}");
            }
            Stmt::Print(p) => match p {
                Print::Int(e) => self.line(&format!("putint({}); putch(10);", print_expr(e))),
                Print::Float(e) => self.line(&format!("putfloat({}); putch(10);", print_expr(e))),
                Print::Format(args) => {
                    let spec = |e: &Expr| if e.ty() == Ty::Int { "%d" } else { "%a" };
                    let fmt: Vec<String> = args.iter().map(|e| format!("<{}>", spec(e))).collect();
                    let mut line = format!("putf(\"{}\\n\"", fmt.join(" "));
                    for e in args {
                        line.push_str(", ");
                        line.push_str(&print_expr(e));
                    }
                    self.line(&format!("{line});"));
                }
                Print::Array { ty, n, array } => {
                    let f = if *ty == Ty::Int {
                        "putarray"
                    } else {
                        "putfarray"
                    };
                    self.line(&format!("{f}({n}, {});", array_ref(array)));
                }
            },
        }
    }

    fn decl(&mut self, d: &Decl) {
        let mut s = String::new();
        if d.is_const {
            s.push_str("const ");
        }
        let _ = write!(s, "{} {}", d.ty.name(), d.name);
        for dim in &d.dims {
            let _ = write!(s, "[{}]", print_expr(&dim.expr));
        }
        match &d.init {
            Some(Init::Expr(e)) if d.dims.is_empty() && needs_clamp(e, d.ty) => {
                // Declare, then store through the clamp.
                s.push_str(if d.ty == Ty::Int { " = 0;" } else { " = 0.0;" });
                self.line(&s);
                let target = LValue::Var {
                    name: d.name.clone(),
                    ty: d.ty,
                };
                self.assign(&target, e);
                return;
            }
            Some(init) => {
                s.push_str(" = ");
                init_text(&mut s, init);
            }
            None => {}
        }
        s.push(';');
        self.line(&s);
    }

    fn assign(&mut self, target: &LValue, value: &Expr) {
        let place = lvalue(target);
        let ty = target.ty();
        if !needs_clamp(value, ty) {
            self.line(&format!("{place} = {};", print_expr(value)));
        } else if let (LValue::Var { name, .. }, Ty::Float) = (target, ty) {
            self.line(&format!("{name} = {};", print_expr(value)));
            self.clamp_var(name);
        } else {
            self.line(&format!("{FLOAT_TEMP} = {};", print_expr(value)));
            self.clamp_var(FLOAT_TEMP);
            self.line(&format!("{place} = {FLOAT_TEMP};"));
        }
    }

    fn ret_stmt(&mut self, e: Option<&Expr>) {
        match (e, self.ret) {
            (Some(e), Some(ty)) if needs_clamp(e, ty) => {
                self.line(&format!("{FLOAT_TEMP} = {};", print_expr(e)));
                self.clamp_var(FLOAT_TEMP);
                self.line(&format!("return {FLOAT_TEMP};"));
            }
            (Some(e), _) => self.line(&format!("return {};", print_expr(e))),
            (None, _) => self.line("return;"),
        }
    }

    /// Clamps the float variable `v` to the store bound.
    fn clamp_var(&mut self, v: &str) {
        let b = FLOAT_STORE_LITERAL;
        self.line(&format!(
            "if ({v} > {b}) {v} = {b}; if ({v} < -{b}) {v} = -{b};"
        ));
    }
}

fn param(p: &Param) -> String {
    match &p.array {
        None => format!("{} {}", p.ty.name(), p.name),
        Some(a) => {
            let inner: String = a.inner.iter().map(|d| format!("[{d}]")).collect();
            format!("{} {}[]{inner}", p.ty.name(), p.name)
        }
    }
}

fn init_text(s: &mut String, init: &Init) {
    match init {
        Init::Expr(e) => expr(s, e),
        Init::List(items) => {
            s.push('{');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                init_text(s, item);
            }
            s.push('}');
        }
    }
}

fn lvalue(l: &LValue) -> String {
    match l {
        LValue::Var { name, .. } => name.clone(),
        LValue::Elem { name, index, .. } => format!("{name}{}", indices(index)),
    }
}

fn indices(index: &[Index]) -> String {
    let mut s = String::new();
    for i in index {
        s.push('[');
        match i {
            Index::Const(k) => {
                let _ = write!(s, "{k}");
            }
            Index::Loop { var, offset } => {
                s.push_str(var);
                if *offset > 0 {
                    let _ = write!(s, " + {offset}");
                } else if *offset < 0 {
                    let _ = write!(s, " - {}", -offset);
                }
            }
            Index::Wrap { expr: e, size } => {
                s.push_str("((");
                expr(&mut s, e);
                let _ = write!(s, ") % {size} + {size}) % {size}");
            }
        }
        s.push(']');
    }
    s
}

fn array_ref(a: &ArrayRef) -> String {
    format!("{}{}", a.name, indices(&a.index))
}

fn call(c: &Call) -> String {
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| match a {
            Arg::Value(e) => print_expr(e),
            Arg::Array(r) => array_ref(r),
        })
        .collect();
    format!("{}({})", c.func, args.join(", "))
}

fn expr(s: &mut String, e: &Expr) {
    match e {
        Expr::Int(v) => s.push_str(&int_lit(*v)),
        Expr::Float(v) => s.push_str(&float_lit(*v)),
        Expr::Var { name, .. } => s.push_str(name),
        Expr::Elem { name, index, .. } => {
            s.push_str(name);
            s.push_str(&indices(index));
        }
        Expr::Neg(x) => {
            s.push_str("(-");
            expr(s, x);
            s.push(')');
        }
        Expr::Not(x) => {
            s.push_str("(!");
            expr(s, x);
            s.push(')');
        }
        Expr::Bin(op, l, r) => {
            s.push('(');
            expr(s, l);
            let _ = write!(s, " {} ", op.symbol());
            expr(s, r);
            s.push(')');
        }
        Expr::Div(l, d) | Expr::Rem(l, d) => {
            s.push('(');
            expr(s, l);
            s.push_str(if matches!(e, Expr::Div(..)) {
                " / "
            } else {
                " % "
            });
            divisor(s, d);
            s.push(')');
        }
        Expr::Call(c) => s.push_str(&call(c)),
        Expr::Input(Ty::Int) => s.push_str("getint()"),
        Expr::Input(Ty::Float) => s.push_str("getfloat()"),
    }
}

fn divisor(s: &mut String, d: &Divisor) {
    match d {
        Divisor::Int(k) => s.push_str(&int_lit(*k)),
        Divisor::IntExpr { expr: e, k } => {
            s.push('(');
            expr(s, e);
            let _ = write!(s, " % {k} + {})", k + 1);
        }
        Divisor::Float(c) => s.push_str(&float_lit(*c)),
        Divisor::FloatSquare(x) => {
            s.push('(');
            expr(s, x);
            s.push_str(" * ");
            expr(s, x);
            s.push_str(" + 1.0)");
        }
    }
}

/// An `int` literal; the spelling (decimal, hex, octal) depends on the value.
pub fn int_lit(v: i32) -> String {
    if v == i32::MIN {
        return "(-2147483647 - 1)".to_string();
    }
    let m = v.unsigned_abs();
    let digits = match m % 7 {
        _ if m < 8 => format!("{m}"),
        3 => format!("0x{m:x}"),
        5 => format!("0{m:o}"),
        6 => format!("0X{m:X}"),
        _ => format!("{m}"),
    };
    if v < 0 {
        format!("(-{digits})")
    } else {
        digits
    }
}

/// A `float` literal that reads back as exactly `v` (finite, not subnormal): the
/// shortest decimal that round-trips, or C99 hex notation, by the value's bits.
pub fn float_lit(v: f32) -> String {
    assert!(v.is_finite(), "float literal {v} is not finite");
    let m = v.abs();
    let digits = if m.to_bits() % 3 == 1 {
        hex_float(m)
    } else {
        let d = format!("{m:?}");
        if d.contains(['.', 'e']) {
            d
        } else {
            format!("{d}.0")
        }
    };
    if v.is_sign_negative() {
        format!("(-{digits})")
    } else {
        digits
    }
}

/// A float as an input line for `getfloat` (`scanf("%a")`): exact, decimal or hex.
pub fn input_float(v: f32) -> String {
    float_lit(v).replace("(-", "-").replace(')', "")
}

/// `m` (non-negative, normal or zero) in C99 hexadecimal float notation.
fn hex_float(m: f32) -> String {
    if m == 0.0 {
        return "0x0p+0".to_string();
    }
    let bits = m.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    // 23 fraction bits, shifted to 24 to make six hex digits.
    let mut frac = format!("{:06x}", (bits & 0x7f_ffff) << 1);
    while frac.ends_with('0') {
        frac.pop();
    }
    let dot = if frac.is_empty() {
        String::new()
    } else {
        format!(".{frac}")
    };
    format!("0x1{dot}p{exp:+}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literals_read_back() {
        for v in [
            0,
            1,
            7,
            10,
            17,
            19,
            24,
            100,
            -5,
            -24,
            i32::MAX,
            i32::MIN + 1,
        ] {
            let s = int_lit(v);
            let t = s.trim_start_matches("(-").trim_end_matches(')');
            let m = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
                i64::from_str_radix(h, 16).unwrap()
            } else if t.len() > 1 && t.starts_with('0') {
                i64::from_str_radix(&t[1..], 8).unwrap()
            } else {
                t.parse().unwrap()
            };
            assert_eq!(if v < 0 { -m } else { m }, v as i64, "{s}");
        }
        assert_eq!(int_lit(i32::MIN), "(-2147483647 - 1)");
    }

    #[test]
    fn hex_floats_are_exact() {
        assert_eq!(hex_float(1.0), "0x1p+0");
        assert_eq!(hex_float(3.0), "0x1.8p+1");
        assert_eq!(hex_float(0.1), "0x1.99999ap-4");
        assert_eq!(float_lit(-2.5), "(-2.5)");
    }

    #[test]
    fn clamped_stores() {
        let x = Expr::var("x", Ty::Float);
        let big = Expr::bin(BinOp::Mul, x.clone(), x.clone());
        let mut p = Printer {
            ret: Some(Ty::Float),
            ..Default::default()
        };
        let elem = LValue::Elem {
            name: "a".into(),
            ty: Ty::Float,
            index: vec![Index::Const(1)],
        };
        p.assign(&elem, &big);
        p.assign(&elem, &x);
        assert_eq!(
            p.text,
            "tf = (x * x);\n\
             if (tf > 1048576.0) tf = 1048576.0; if (tf < -1048576.0) tf = -1048576.0;\n\
             a[1] = tf;\n\
             a[1] = x;\n"
        );
    }
}
