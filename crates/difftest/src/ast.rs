//! The generated program, as a tree the generator builds, the printer turns into SysY
//! text and the reducer edits.
//!
//! The tree is not SysY's full AST: it holds only what the generator produces, and
//! its nodes carry the facts that keep a program well defined whatever the reducer
//! deletes. An array index is one of a few safe shapes ([`Index`]); a divisor is
//! non-zero and not -1 by its shape ([`Divisor`]); a loop is counted, with a variable
//! the body never assigns ([`Stmt::Loop`]), and a `continue` steps that variable
//! first. Every name is unique in the program, so deleting a declaration can never
//! make a use refer to another variable: it fails to compile instead, and the reducer
//! rejects the candidate.

/// The two value types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Int,
    Float,
}

impl Ty {
    /// The SysY spelling.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
        }
    }
}

/// A whole program: globals, then functions in definition order (`main` last).
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub globals: Vec<Decl>,
    pub funcs: Vec<Func>,
    /// What the program reads from stdin (the values of its [`Expr::Input`]s).
    pub input: String,
}

/// A variable or constant definition, global or local.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub name: String,
    pub ty: Ty,
    pub is_const: bool,
    /// Array dimensions (empty for a scalar).
    pub dims: Vec<Dim>,
    /// `None` only for globals (zero-initialised).
    pub init: Option<Init>,
}

impl Decl {
    /// The dimension sizes.
    pub fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.size).collect()
    }
}

/// An array dimension: its size and the constant expression that spells it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    pub size: usize,
    pub expr: Expr,
}

/// An initialiser: an expression, or a brace list of initialisers (brace elision
/// allowed: a list may hold bare expressions where sub-arrays are expected).
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Expr(Expr),
    List(Vec<Init>),
}

/// A function definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    /// `None` for `void`.
    pub ret: Option<Ty>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    /// The final `return` (non-void functions): kept apart from the body so no
    /// reduction can remove it and let control fall off the end.
    pub tail: Option<Expr>,
    /// A pure function reads only its parameters, its locals and constants, writes
    /// only its locals, prints nothing and calls only pure functions: calls to it may
    /// appear anywhere in an expression. Calls to impure functions appear only where
    /// C sequences them (see [`crate::validate`]).
    pub pure_fn: bool,
    /// `Some` for a function that calls itself.
    pub recursion: Option<Recursion>,
}

/// How a self-recursive function stays bounded. It starts with
///
/// ```text
/// if (depth <= 0 || depth > limit) return base;
/// ```
///
/// and every call to itself passes `depth - c` (`c >= 1`, an integer literal) as
/// the depth, which no statement assigns: whatever its callers pass, it recurses at
/// most `limit` levels deep. The recursive call is usually the final return, alone
/// (`return f(depth - 1, ...);`, a tail call) or combined with a value
/// (`return x + f(depth - 1, ...);`, an accumulator), or a void function's last
/// statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Recursion {
    /// The depth parameter: an `int`, never assigned.
    pub depth: String,
    /// The deepest recursion.
    pub limit: i32,
    /// What the base case returns (`None` for a void function).
    pub base: Option<Expr>,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    /// `Some` for an array parameter.
    pub array: Option<ArrayParam>,
}

/// An array parameter `T a[][d1]...`: the body indexes it as if its first dimension
/// were `len`; callers pass arrays at least that long with the same inner dimensions.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayParam {
    pub len: usize,
    pub inner: Vec<usize>,
}

impl ArrayParam {
    /// The shape the body sees: `len` then the inner dimensions.
    pub fn shape(&self) -> Vec<usize> {
        let mut s = vec![self.len];
        s.extend(&self.inner);
        s
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A local definition.
    Decl(Decl),
    /// `target = value;` (clamped when a float could grow without bound; see the
    /// printer).
    Assign { target: LValue, value: Expr },
    /// A call for its effects: `f(args);`.
    Call(Call),
    /// `if (cond) then else els`.
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
    },
    /// A counted loop:
    ///
    /// ```text
    /// int var = start;
    /// while (var < end && cond) { body  var = var + step; }     (step > 0)
    /// while (var > end && cond) { body  var = var + step; }     (step < 0)
    /// ```
    ///
    /// The body never assigns `var`, so the loop runs at most
    /// `ceil((end - start) / step)` times and `var` stays in `[start, end)` (or
    /// `(end, start]`) inside it.
    Loop {
        var: String,
        start: i32,
        end: i32,
        step: i32,
        cond: Option<Expr>,
        body: Vec<Stmt>,
    },
    /// `break;` out of the innermost loop.
    Break,
    /// `continue;` of the innermost loop, whose variable is `var` and step `step`:
    /// printed as `{ var = var + step; continue; }`.
    Continue { var: String, step: i32 },
    /// `return value;` from inside the body (clamped for float functions).
    Return(Option<Expr>),
    /// `{ ... }`.
    Block(Vec<Stmt>),
    /// Output through the runtime library.
    Print(Print),
}

/// A call to the runtime's output functions.
#[derive(Clone, Debug, PartialEq)]
pub enum Print {
    /// `putint(e); putch(10);`
    Int(Expr),
    /// `putfloat(e); putch(10);`
    Float(Expr),
    /// `putf("<%d %a> ...\n", e1, e2, ...)`: ints as `%d`, floats as `%a` (each
    /// passed to the variadic `putf` as a double), one line.
    Format(Vec<Expr>),
    /// `putarray(n, a)` / `putfarray(n, a)` of a (partially indexed) array whose
    /// remaining dimension is at least `n`.
    Array { ty: Ty, n: usize, array: ArrayRef },
}

/// An assignable place.
#[derive(Clone, Debug, PartialEq)]
pub enum LValue {
    Var {
        name: String,
        ty: Ty,
    },
    Elem {
        name: String,
        ty: Ty,
        index: Vec<Index>,
    },
}

impl LValue {
    pub fn ty(&self) -> Ty {
        match self {
            LValue::Var { ty, .. } | LValue::Elem { ty, .. } => *ty,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            LValue::Var { name, .. } | LValue::Elem { name, .. } => name,
        }
    }
}

/// A (possibly partially) indexed array, as passed to a call.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayRef {
    pub name: String,
    pub index: Vec<Index>,
}

/// An array index whose value is within `[0, size)` by construction.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// A constant in range.
    Const(usize),
    /// `var + offset` for the variable of an enclosing loop, whose range plus offset
    /// lies within the dimension.
    Loop { var: String, offset: i32 },
    /// `((e % size) + size) % size`: in range whatever `e` is.
    Wrap { expr: Box<Expr>, size: usize },
}

/// A divisor that is never zero (nor -1 for integers, so `INT_MIN / d` is defined).
#[derive(Clone, Debug, PartialEq)]
pub enum Divisor {
    /// An integer constant other than 0 and -1.
    Int(i32),
    /// `(e % k + k + 1)` with `k > 0`: an integer in `[2, 2k]`.
    IntExpr { expr: Box<Expr>, k: i32 },
    /// A float constant with magnitude at least 1/4.
    Float(f32),
    /// `(e * e + 1.0)`: a float at least 1.
    FloatSquare(Box<Expr>),
}

/// Binary operators. Arithmetic follows C's usual conversions (float when either
/// side is float); comparisons and logical operators yield int 0/1, and `&&`/`||`
/// short-circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_arith(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Sub | BinOp::Mul)
    }

    pub fn is_logic(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

/// A call of a generated function.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub func: String,
    pub args: Vec<Arg>,
    /// Whether the callee is pure (see [`Func::pure_fn`]).
    pub pure_fn: bool,
    /// The callee's return type (`None`: void).
    pub ret: Option<Ty>,
}

/// A call argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A scalar (converted to the parameter's type).
    Value(Expr),
    /// An array for an array parameter.
    Array(ArrayRef),
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i32),
    Float(f32),
    /// A scalar variable, parameter or constant.
    Var {
        name: String,
        ty: Ty,
    },
    /// A fully indexed array element.
    Elem {
        name: String,
        ty: Ty,
        index: Vec<Index>,
    },
    Neg(Box<Expr>),
    /// `!e` (int 0/1).
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `l / d`.
    Div(Box<Expr>, Divisor),
    /// `l % d` (integers only).
    Rem(Box<Expr>, Divisor),
    /// A call of a non-void function.
    Call(Call),
    /// `getint()` / `getfloat()`: a value the compiler cannot know. Only as the
    /// initialiser of a variable at the top level of `main`, so the reads happen in
    /// a fixed order; the input is generated with the program and bounded like a
    /// stored value.
    Input(Ty),
}

impl Expr {
    /// The C type of the expression.
    pub fn ty(&self) -> Ty {
        match self {
            Expr::Int(_) | Expr::Not(_) | Expr::Rem(..) => Ty::Int,
            Expr::Float(_) => Ty::Float,
            Expr::Var { ty, .. } | Expr::Elem { ty, .. } => *ty,
            Expr::Neg(e) => e.ty(),
            Expr::Bin(op, l, r) => {
                if op.is_arith() && (l.ty() == Ty::Float || r.ty() == Ty::Float) {
                    Ty::Float
                } else {
                    Ty::Int
                }
            }
            Expr::Div(l, d) => match (l.ty(), d) {
                (Ty::Int, Divisor::Int(_) | Divisor::IntExpr { .. }) => Ty::Int,
                _ => Ty::Float,
            },
            Expr::Call(c) => c.ret.unwrap_or(Ty::Int),
            Expr::Input(ty) => *ty,
        }
    }

    pub fn var(name: &str, ty: Ty) -> Expr {
        Expr::Var {
            name: name.to_string(),
            ty,
        }
    }

    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r))
    }
}

/// The values a loop variable takes inside the body of `Stmt::Loop { start, end,
/// step, .. }`, as `(min, max)`: `[start, end - 1]` counting up, `[end + 1, start]`
/// counting down (a loop that never runs gets the one-value range of `start`).
pub fn loop_range(start: i32, end: i32, step: i32) -> (i64, i64) {
    let (start, end) = (start as i64, end as i64);
    if step > 0 {
        (start, (end - 1).max(start))
    } else {
        ((end + 1).min(start), start)
    }
}
