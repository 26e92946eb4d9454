//! The untyped syntax tree produced by the parser. Every node has a [`Span`].
//!
//! Names are unresolved strings and no types are checked; see [`crate::sema`] for the
//! analysis that turns this into the typed [`crate::tast`].

pub use crate::span::Span;

/// An identifier occurrence; its name is the source text at its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ident {
    /// Where it occurs.
    pub span: Span,
}

impl Ident {
    /// The identifier's name, given the source text the tree was parsed from.
    pub fn text<'s>(&self, source: &'s str) -> &'s str {
        source.get(self.span.range()).unwrap_or("")
    }
}

/// A basic type: `int` or `float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BType {
    /// `int`
    Int,
    /// `float`
    Float,
}

/// A function's declared return type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncType {
    /// `int`
    Int,
    /// `float`
    Float,
    /// `void`
    Void,
}

/// A whole file.
#[derive(Clone, Debug, PartialEq)]
pub struct CompUnit {
    /// Global declarations and function definitions in source order.
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A global (const) variable declaration.
    Decl(Decl),
    /// A function definition.
    Func(FuncDef),
}

/// `[const] BType def, def, ...;`
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// Declared with `const`.
    pub is_const: bool,
    /// The element type.
    pub ty: BType,
    /// The declarators.
    pub defs: Vec<VarDef>,
    /// The whole declaration.
    pub span: Span,
}

/// One declarator: `name[d0][d1] = init`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDef {
    /// The declared name.
    pub name: Ident,
    /// Array dimensions (constant expressions), outermost first.
    pub dims: Vec<Expr>,
    /// The initialiser, if any.
    pub init: Option<InitVal>,
    /// The whole declarator.
    pub span: Span,
}

/// An initialiser: an expression or a brace-enclosed list.
#[derive(Clone, Debug, PartialEq)]
pub enum InitVal {
    /// A single expression.
    Expr(Expr),
    /// `{ a, b, ... }` (possibly empty) with the span of the braces.
    List(Vec<InitVal>, Span),
}

impl InitVal {
    /// The initialiser's span.
    pub fn span(&self) -> Span {
        match self {
            InitVal::Expr(e) => e.span,
            InitVal::List(_, s) => *s,
        }
    }
}

/// `ret name(params) body`
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDef {
    /// The return type.
    pub ret: FuncType,
    /// The function's name.
    pub name: Ident,
    /// The formal parameters.
    pub params: Vec<Param>,
    /// The body.
    pub body: Block,
    /// From the return type to the closing brace.
    pub span: Span,
}

/// A formal parameter: `BType name` or `BType name[][d1]...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The element type.
    pub ty: BType,
    /// The name.
    pub name: Ident,
    /// `None` for a scalar; for an array parameter, `Some(inner)` with the dimensions
    /// after the first `[]` (a size written in the first brackets is ignored, as in C).
    pub dims: Option<Vec<Expr>>,
    /// The whole parameter.
    pub span: Span,
}

/// `{ items }`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Declarations and statements in order.
    pub items: Vec<BlockItem>,
    /// From `{` to `}`.
    pub span: Span,
}

/// An item of a block.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockItem {
    /// A local declaration.
    Decl(Decl),
    /// A statement.
    Stmt(Stmt),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `lhs = rhs;`
    Assign {
        /// The target.
        lhs: LVal,
        /// The value.
        rhs: Expr,
        /// The whole statement.
        span: Span,
    },
    /// `expr;` or the empty statement `;` (`None`).
    Expr(Option<Expr>, Span),
    /// A nested block.
    Block(Block),
    /// `if (cond) then [else els]`
    If {
        /// The condition.
        cond: Expr,
        /// The then branch.
        then: Box<Stmt>,
        /// The else branch.
        els: Option<Box<Stmt>>,
        /// The whole statement.
        span: Span,
    },
    /// `while (cond) body`
    While {
        /// The condition.
        cond: Expr,
        /// The body.
        body: Box<Stmt>,
        /// The whole statement.
        span: Span,
    },
    /// `break;`
    Break(Span),
    /// `continue;`
    Continue(Span),
    /// `return [value];`
    Return(Option<Expr>, Span),
}

/// A variable reference with optional subscripts: `name[i][j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LVal {
    /// The variable's name.
    pub name: Ident,
    /// Subscripts, outermost first.
    pub indices: Vec<Expr>,
    /// The whole reference.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `+`
    Plus,
    /// `-`
    Neg,
    /// `!`
    Not,
}

/// Binary operators, including the short-circuit ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// Binding strength: higher binds tighter (`||` is 1, `*` is 6).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne => 3,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
        }
    }

    /// The operator's spelling.
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
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The form.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// Expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal (already reinterpreted as i32).
    IntLit(i32),
    /// A float literal.
    FloatLit(f32),
    /// A string literal (decoded bytes).
    StrLit(Vec<u8>),
    /// A variable, possibly subscripted.
    LVal(LVal),
    /// A call `name(args)`.
    Call {
        /// The callee's name.
        name: Ident,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}
