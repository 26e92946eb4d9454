//! The typed AST: the output of semantic analysis and the input of lowering to SSA IR.
//!
//! Everything here is resolved and explicit:
//!
//! * every [`Expr`] carries its [`Type`]; operands of a [`ExprKind::Binary`] always have
//!   the same type, because every implicit int<->float conversion is an explicit
//!   [`ExprKind::IntToFloat`] / [`ExprKind::FloatToInt`] node (in arithmetic, assignments,
//!   initialisers, arguments and returns);
//! * names are resolved to [`Var`] (a [`LocalId`] into [`Function::locals`] or a
//!   [`GlobalId`] into [`Program::globals`]) and calls to a [`FuncId`] into
//!   [`Program::funcs`];
//! * constants are folded: scalar `const` uses, const array elements with constant
//!   indices and constant subexpressions become [`ExprKind::IntLit`] / [`ExprKind::FloatLit`];
//! * array initialisers are normalised (C brace elision) into a sparse, flat, row-major
//!   list of `(flat index, value)` pairs;
//! * `starttime()` / `stoptime()` are calls to `_sysy_starttime(LINE)` /
//!   `_sysy_stoptime(LINE)`.
//!
//! Conventions for array shapes: `dims` are listed outermost first, so `int a[4][3]` has
//! dims `[4, 3]` and element `a[i][j]` lives at flat index `i * 3 + j`. An array parameter
//! `int a[][3]` is a pointer whose pointee shape is `[3]` (see [`Shape::Pointer`]).

pub use crate::span::Span;

/// Index of a local variable (or parameter) in [`Function::locals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// Index of a global variable in [`Program::globals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);

/// Index of a function (runtime or user) in [`Program::funcs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

impl LocalId {
    /// The id as a `usize` index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl GlobalId {
    /// The id as a `usize` index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl FuncId {
    /// The id as a `usize` index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A scalar (element) type: the `BType` of SysY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarTy {
    /// 32-bit two's complement integer.
    Int,
    /// IEEE-754 single precision float.
    Float,
}

/// The return type of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetTy {
    /// Returns an `int`.
    Int,
    /// Returns a `float`.
    Float,
    /// Returns nothing.
    Void,
}

/// The type of an expression value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// An `int` value.
    Int,
    /// A `float` value.
    Float,
    /// A pointer to (the first of consecutive) objects of shape `dims` with element type
    /// `elem`: the value of an array-valued expression (an unindexed or partially indexed
    /// array, or an array parameter). `dims` are the dimensions that remain *after* the
    /// pointed-to position: passing `int b[4][3]` as `b` gives `Ptr { Int, [3] }`, `b[i]`
    /// gives `Ptr { Int, [] }` (a plain `int*`). Only ever used as a call argument.
    Ptr {
        /// Element type of the array.
        elem: ScalarTy,
        /// Remaining (inner) dimensions, outermost first; empty for `int*`/`float*`.
        dims: Vec<u32>,
    },
    /// A string literal (`char*`); only ever the first argument of `putf`.
    Str,
    /// The (non-)value of a call to a `void` function; only in expression statements.
    Void,
}

impl From<ScalarTy> for Type {
    fn from(t: ScalarTy) -> Type {
        match t {
            ScalarTy::Int => Type::Int,
            ScalarTy::Float => Type::Float,
        }
    }
}

impl From<RetTy> for Type {
    fn from(t: RetTy) -> Type {
        match t {
            RetTy::Int => Type::Int,
            RetTy::Float => Type::Float,
            RetTy::Void => Type::Void,
        }
    }
}

/// A compile-time constant value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstVal {
    /// An `int` constant.
    Int(i32),
    /// A `float` constant.
    Float(f32),
}

impl ConstVal {
    /// True when the value's bit pattern is all zeros (`0` or `+0.0`, not `-0.0`).
    pub fn is_zero_bits(self) -> bool {
        match self {
            ConstVal::Int(v) => v == 0,
            ConstVal::Float(v) => v.to_bits() == 0,
        }
    }

    /// The value's 32-bit pattern (two's complement or IEEE-754 single).
    pub fn bits(self) -> u32 {
        match self {
            ConstVal::Int(v) => v as u32,
            ConstVal::Float(v) => v.to_bits(),
        }
    }
}

/// The shape of a variable: scalar, array, or array parameter (pointer).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A scalar variable.
    Scalar,
    /// An array with all dimensions known, outermost first (each > 0 is not guaranteed:
    /// a dimension may be 0).
    Array(Vec<u32>),
    /// An array parameter `int a[][d1][d2]...`: a pointer; holds the inner dimensions
    /// `[d1, d2, ...]` (the first, omitted one is not stored). `int a[]` is `Pointer([])`.
    Pointer(Vec<u32>),
}

impl Shape {
    /// True for [`Shape::Array`] and [`Shape::Pointer`].
    pub fn is_array(&self) -> bool {
        !matches!(self, Shape::Scalar)
    }

    /// Number of subscripts needed to reach an element: 0 for scalars, `dims.len()` for
    /// arrays, `inner.len() + 1` for pointers.
    pub fn rank(&self) -> usize {
        match self {
            Shape::Scalar => 0,
            Shape::Array(d) => d.len(),
            Shape::Pointer(d) => d.len() + 1,
        }
    }

    /// The dimensions after the first one (those that determine the strides): `[3]` for
    /// both `int a[4][3]` and `int a[][3]`; empty for scalars.
    pub fn inner_dims(&self) -> &[u32] {
        match self {
            Shape::Scalar => &[],
            Shape::Array(d) => d.get(1..).unwrap_or(&[]),
            Shape::Pointer(d) => d,
        }
    }

    /// Total number of elements of an [`Shape::Array`] (1 for scalars, 0 for pointers),
    /// as u64 (may exceed u32 in invalid programs; sema rejects arrays over 2^31 bytes).
    pub fn num_elems(&self) -> u64 {
        match self {
            Shape::Scalar => 1,
            Shape::Array(d) => d.iter().map(|&x| x as u64).product(),
            Shape::Pointer(_) => 0,
        }
    }
}

/// A local variable, constant or parameter of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalVar {
    /// Source name (not unique within a function: shadowing is resolved by ids).
    pub name: String,
    /// Element type (the type of the variable itself for scalars).
    pub ty: ScalarTy,
    /// Scalar, array or pointer (array parameter).
    pub shape: Shape,
    /// Declared `const`. Uses of scalar consts are already replaced by literals.
    pub is_const: bool,
    /// True for function parameters.
    pub is_param: bool,
    /// Span of the declaring name.
    pub span: Span,
}

/// A global variable or constant.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalVar {
    /// Source name (unique among globals).
    pub name: String,
    /// Element type (the type of the variable itself for scalars).
    pub ty: ScalarTy,
    /// All dimensions, outermost first; empty for scalars.
    pub dims: Vec<u32>,
    /// Declared `const`.
    pub is_const: bool,
    /// The constant initial value (globals without initialiser are zero).
    pub init: GlobalInit,
    /// Span of the declaring name.
    pub span: Span,
}

/// The initial value of a global.
#[derive(Clone, Debug, PartialEq)]
pub enum GlobalInit {
    /// A scalar global's value (already converted to the global's type).
    Scalar(ConstVal),
    /// An array global: `(flat row-major index, value)` pairs, sorted by index, unique,
    /// omitting elements whose bit pattern is zero; all other elements are zero.
    Array(Vec<(u32, ConstVal)>),
}

/// The initialiser of a local declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// No initialiser: scalar and array contents are unspecified (no zeroing needed).
    None,
    /// A scalar initialiser (already converted to the variable's type).
    Scalar(Expr),
    /// An array initialiser: `(flat row-major index, value)` pairs sorted by index and
    /// unique, in source evaluation order, values converted to the element type. The array
    /// is fully initialised: every element not listed is zero.
    Array(Vec<(u32, Expr)>),
}

/// A reference to a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// A local variable or parameter of the enclosing function.
    Local(LocalId),
    /// A global variable.
    Global(GlobalId),
}

/// An assignable location: a scalar variable or a fully indexed array element.
#[derive(Clone, Debug, PartialEq)]
pub struct LVal {
    /// The variable.
    pub base: Var,
    /// Subscripts, outermost first; empty for a scalar variable, otherwise exactly the
    /// variable's [`Shape::rank`] many, each of type int.
    pub indices: Vec<Expr>,
    /// Type of the location (the element type).
    pub ty: ScalarTy,
    /// Source span of the whole lvalue.
    pub span: Span,
}

/// Unary operators (unary `+` is dropped by sema).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation; result has the operand's type (int negation wraps).
    Neg,
    /// Logical not; operand int or float, result int 0/1 (`x == 0`).
    Not,
}

/// Binary (non-short-circuit) operators. Both operands always have the same type,
/// `Int` or `Float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`, wrapping for int.
    Add,
    /// `-`, wrapping for int.
    Sub,
    /// `*`, wrapping for int.
    Mul,
    /// `/`, truncating toward zero for int.
    Div,
    /// `%`, int only; sign of the dividend.
    Rem,
    /// `<`, result int 0/1.
    Lt,
    /// `<=`, result int 0/1.
    Le,
    /// `>`, result int 0/1.
    Gt,
    /// `>=`, result int 0/1.
    Ge,
    /// `==`, result int 0/1.
    Eq,
    /// `!=`, result int 0/1.
    Ne,
}

impl BinOp {
    /// True for the six comparisons (whose result is int whatever the operand type).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    /// The operator's C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
        }
    }
}

/// A typed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Its type: `Int`/`Float` for values, `Ptr` for array arguments, `Str` for putf's
    /// format, `Void` for calls of void functions.
    pub ty: Type,
    /// Source span.
    pub span: Span,
}

/// The expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An int literal (type `Int`).
    IntLit(i32),
    /// A float literal (type `Float`).
    FloatLit(f32),
    /// A string literal: the decoded bytes, without a terminating NUL (type `Str`).
    StrLit(Vec<u8>),
    /// The value of a scalar variable (type `Int`/`Float`), or an unindexed array /
    /// array parameter decaying to a pointer to its first element (type `Ptr`).
    Var(Var),
    /// An array subscript `base[i0][i1]...` with 1 ..= rank int indices. Fully indexed:
    /// the element's value (type `Int`/`Float`); partially indexed: the address of the
    /// addressed sub-array (type `Ptr`). The declared dims come from the variable.
    Index {
        /// The indexed variable (an array or array parameter).
        base: Var,
        /// Subscripts, outermost first, each of type int.
        indices: Vec<Expr>,
    },
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation; both operands have the same type (`Int` or `Float`).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Short-circuit `&&`: operands int or float (non-zero = true), result int 0/1.
    And(Box<Expr>, Box<Expr>),
    /// Short-circuit `||`: operands int or float (non-zero = true), result int 0/1.
    Or(Box<Expr>, Box<Expr>),
    /// Conversion of an int operand to float.
    IntToFloat(Box<Expr>),
    /// Conversion of a float operand to int, truncating toward zero.
    FloatToInt(Box<Expr>),
    /// A call. Arguments are converted to the parameter types (scalars) or are `Ptr`s of
    /// the parameter's element type and inner dims (an array of any shape passed to a
    /// `T[]` parameter is given the parameter's type `Ptr { T, [] }`: same address). For the variadic `putf`, the first
    /// argument is a `StrLit` and the rest are `Int`/`Float` as written (the C default
    /// promotion of floats to double is the lowering's job).
    Call {
        /// The callee.
        func: FuncId,
        /// The arguments, in order.
        args: Vec<Expr>,
    },
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `lhs = rhs;` (rhs already converted to the lvalue's type).
    Assign {
        /// The target.
        lhs: LVal,
        /// The value.
        rhs: Expr,
    },
    /// An expression evaluated for its effects (may be a void call).
    Expr(Expr),
    /// A nested block (its own scope in the source; names are already resolved).
    Block(Vec<Stmt>),
    /// `if (cond) then else els`; `cond` has type int or float, non-zero = true.
    If {
        /// The condition.
        cond: Expr,
        /// The then branch.
        then: Box<Stmt>,
        /// The optional else branch.
        els: Option<Box<Stmt>>,
    },
    /// `while (cond) body`; `cond` has type int or float, non-zero = true.
    While {
        /// The condition.
        cond: Expr,
        /// The loop body.
        body: Box<Stmt>,
    },
    /// `break;` out of the innermost loop.
    Break,
    /// `continue;` the innermost loop.
    Continue,
    /// `return;` or `return e;` (e converted to the function's return type).
    Return(Option<Expr>),
    /// A local declaration: the variable comes into existence here (each execution of
    /// the statement re-initialises it as `init` says).
    Decl {
        /// The declared local.
        local: LocalId,
        /// Its initialiser.
        init: Init,
    },
}

/// A function: a user definition or a runtime library declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The symbol name (for the runtime, the linker name, e.g. `_sysy_starttime`).
    pub name: String,
    /// The return type.
    pub ret: RetTy,
    /// The parameters' types in order: `Int`, `Float`, or `Ptr` for array parameters
    /// (`int a[][3]` is `Ptr { Int, [3] }`); `putf`'s is `[Str]`.
    pub param_tys: Vec<Type>,
    /// Accepts extra arguments after `param_tys` (only `putf`).
    pub variadic: bool,
    /// The parameters as locals, in order (empty for runtime functions).
    pub params: Vec<LocalId>,
    /// All locals of the function, parameters included, indexed by [`LocalId`].
    pub locals: Vec<LocalVar>,
    /// The body; `None` for runtime library functions.
    pub body: Option<Vec<Stmt>>,
    /// True for the pre-declared runtime library functions.
    pub is_runtime: bool,
    /// Span of the function's name (empty span at 0 for runtime functions).
    pub span: Span,
}

impl Function {
    /// The local with id `id`.
    pub fn local(&self, id: LocalId) -> &LocalVar {
        &self.locals[id.index()]
    }
}

/// A checked translation unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// All globals in declaration order, indexed by [`GlobalId`].
    pub globals: Vec<GlobalVar>,
    /// All functions, indexed by [`FuncId`]: first the runtime library declarations
    /// (see [`RUNTIME_FUNCS`], in that order), then the user functions in source order.
    /// A user function named like a runtime function is a separate, later entry; calls
    /// after its definition refer to it.
    pub funcs: Vec<Function>,
}

impl Program {
    /// The function with id `id`.
    pub fn func(&self, id: FuncId) -> &Function {
        &self.funcs[id.index()]
    }

    /// The global with id `id`.
    pub fn global(&self, id: GlobalId) -> &GlobalVar {
        &self.globals[id.index()]
    }

    /// The user-defined function named `name` (the last one, if several), e.g. `main`.
    pub fn user_func(&self, name: &str) -> Option<FuncId> {
        self.funcs
            .iter()
            .rposition(|f| !f.is_runtime && f.name == name)
            .map(|i| FuncId(i as u32))
    }
}

/// Names of the runtime library functions, in the order of their [`FuncId`]s
/// (`FuncId(0)` is `getint`). `starttime`/`stoptime` in the source become calls of
/// `_sysy_starttime`/`_sysy_stoptime`.
pub const RUNTIME_FUNCS: [&str; 13] = [
    "getint",
    "getch",
    "getfloat",
    "getarray",
    "getfarray",
    "putint",
    "putch",
    "putfloat",
    "putarray",
    "putfarray",
    "putf",
    "_sysy_starttime",
    "_sysy_stoptime",
];
