//! Semantic analysis: the untyped [`ast`] to the typed [`tast`](crate::tast).
//!
//! One pass over the file in source order (C's declare-before-use): names are resolved
//! through a stack of scopes (runtime library, globals, then one per block; a function's
//! parameters share the scope of its body), types are checked and implicit conversions
//! made explicit, constant expressions are evaluated (see [`fold`]), and initialiser
//! lists are normalised (see [`init`]). Errors are reported and analysis goes on, so that
//! one run reports as many independent errors as possible.
//!
//! Submodules: [`scope`] (symbols and scopes), `decl` (declarations and functions),
//! `stmt` (statements), `expr` (expressions), [`fold`] (constant folding), [`init`]
//! (initialiser normalisation), `warn` (warnings about whole functions).

mod decl;
mod expr;
pub mod fold;
pub mod init;
pub mod scope;
mod stmt;
mod warn;

use std::rc::Rc;

use crate::ast;
use crate::diag::{Diagnostic, Diagnostics};
use crate::span::Span;
use crate::tast::*;
use scope::{Scopes, Symbol};

/// Largest number of elements of one array (2 GiB of 4-byte elements).
pub const MAX_ARRAY_ELEMS: u64 = 1 << 29;

/// Marker: an error was reported for this construct; callers skip it silently.
#[derive(Clone, Copy, Debug)]
pub struct Reported;

/// Result of checking a construct.
pub type R<T> = Result<T, Reported>;

/// The compile-time value of a `const` variable, used for folding.
#[derive(Clone, Debug)]
pub enum ConstInfo {
    /// A scalar constant.
    Scalar(ConstVal),
    /// A constant array: `(flat index, value)` sorted by index; missing ones are zero.
    Array(Rc<Vec<(u32, ConstVal)>>),
}

/// Facts about a variable that expression checking needs (locals and globals alike).
#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub var: Var,
    pub ty: ScalarTy,
    pub shape: Shape,
    pub is_const: bool,
}

/// Analyses a parsed file. Errors go to `diags`; the returned program is meaningful
/// only when none were reported.
pub fn analyze(unit: &ast::CompUnit, source: &str, diags: &mut Diagnostics) -> Program {
    let mut s = Sema::new(source, diags);
    for item in &unit.items {
        if s.diags.is_full() {
            break;
        }
        match item {
            ast::Item::Decl(d) => s.global_decl(d),
            ast::Item::Func(f) => s.func_def(f),
        }
    }
    s.check_main();
    Program {
        globals: s.globals,
        funcs: s.funcs,
    }
}

/// The analyser's state.
pub(crate) struct Sema<'a> {
    pub src: &'a str,
    pub diags: &'a mut Diagnostics,
    /// Byte offsets of line starts, computed on first use (for `starttime` lines).
    line_starts: Option<Vec<u32>>,
    pub globals: Vec<GlobalVar>,
    pub global_consts: Vec<Option<ConstInfo>>,
    pub funcs: Vec<Function>,
    pub scopes: Scopes<'a>,
    /// The function being checked: its locals, their constant values, return type, the
    /// number of enclosing loops and its name.
    pub locals: Vec<LocalVar>,
    pub local_consts: Vec<Option<ConstInfo>>,
    pub ret: RetTy,
    pub loops: u32,
    pub func_name: &'a str,
    /// Whether each local of the current function has been referenced (for the
    /// unused-variable and unused-parameter warnings).
    pub used: Vec<bool>,
    /// The spans of each function's parameters, by [`FuncId`] (empty for the runtime
    /// library), for the note saying which parameter a wrong argument belongs to.
    pub param_spans: Vec<Vec<(Span, &'a str)>>,
    /// Nonzero while checking an expression that must be a compile-time constant (a
    /// division by zero there is an error, not a warning).
    pub const_ctx: u32,
}

impl<'a> Sema<'a> {
    fn new(src: &'a str, diags: &'a mut Diagnostics) -> Sema<'a> {
        let mut s = Sema {
            src,
            diags,
            line_starts: None,
            globals: Vec::new(),
            global_consts: Vec::new(),
            funcs: Vec::new(),
            scopes: Scopes::new(),
            locals: Vec::new(),
            local_consts: Vec::new(),
            ret: RetTy::Void,
            loops: 0,
            func_name: "",
            used: Vec::new(),
            param_spans: Vec::new(),
            const_ctx: 0,
        };
        s.declare_runtime();
        s
    }

    /// Pre-declares the runtime library in the outermost scope.
    fn declare_runtime(&mut self) {
        let int_ptr = Type::Ptr {
            elem: ScalarTy::Int,
            dims: vec![],
        };
        let float_ptr = Type::Ptr {
            elem: ScalarTy::Float,
            dims: vec![],
        };
        for name in RUNTIME_FUNCS {
            let (ret, params, variadic) = match name {
                "getint" | "getch" => (RetTy::Int, vec![], false),
                "getfloat" => (RetTy::Float, vec![], false),
                "getarray" => (RetTy::Int, vec![int_ptr.clone()], false),
                "getfarray" => (RetTy::Int, vec![float_ptr.clone()], false),
                "putint" | "putch" => (RetTy::Void, vec![Type::Int], false),
                "putfloat" => (RetTy::Void, vec![Type::Float], false),
                "putarray" => (RetTy::Void, vec![Type::Int, int_ptr.clone()], false),
                "putfarray" => (RetTy::Void, vec![Type::Int, float_ptr.clone()], false),
                "putf" => (RetTy::Void, vec![Type::Str], true),
                _ => (RetTy::Void, vec![Type::Int], false), // _sysy_starttime/stoptime
            };
            let id = FuncId(self.funcs.len() as u32);
            self.funcs.push(Function {
                name: name.to_string(),
                ret,
                param_tys: params,
                variadic,
                params: vec![],
                locals: vec![],
                body: None,
                is_runtime: true,
                span: Span::default(),
            });
            self.scopes.insert(name, Symbol::Func(id));
            self.param_spans.push(Vec::new());
        }
        self.scopes.insert("starttime", Symbol::StartTime);
        self.scopes.insert("stoptime", Symbol::StopTime);
        self.scopes.push(); // the global scope
    }

    /// The name of an identifier (borrowed from the source).
    pub fn text(&self, id: &ast::Ident) -> &'a str {
        id.text(self.src)
    }

    /// Reports an error and returns the marker.
    pub fn err<T>(&mut self, msg: impl Into<String>, span: Span) -> R<T> {
        self.diags.error(msg, span);
        Err(Reported)
    }

    /// Reports a warning controlled by `-W<flag>`.
    pub fn warn(&mut self, flag: &'static str, msg: impl Into<String>, span: Span) {
        self.diags.warning(flag, msg, span);
    }

    /// Where the symbol was defined (for "previous definition is here").
    pub fn definition_span(&self, sym: Symbol) -> Option<Span> {
        match sym {
            Symbol::Local(id) => self.locals.get(id.index()).map(|l| l.span),
            Symbol::Global(id) => self.globals.get(id.index()).map(|g| g.span),
            Symbol::Func(id) => self
                .funcs
                .get(id.index())
                .filter(|f| !f.is_runtime)
                .map(|f| f.span),
            Symbol::StartTime | Symbol::StopTime => None,
        }
    }

    /// Reports `redefinition of {what}` at `span` when `name` is already defined in the
    /// innermost scope, with a note at the previous definition; true if so.
    pub fn check_redefinition(&mut self, what: &str, name: &str, span: Span) -> bool {
        let Some(prev) = self.scopes.lookup_innermost(name) else {
            return false;
        };
        self.diags
            .error(format!("redefinition of {what}`{name}`"), span);
        if let Some(at) = self.definition_span(prev) {
            self.diags.note("previous definition is here", at);
        }
        true
    }

    /// 1-based source line of byte offset `pos`.
    pub fn line_of(&mut self, pos: u32) -> u32 {
        let src = self.src;
        let starts = self.line_starts.get_or_insert_with(|| {
            std::iter::once(0)
                .chain(
                    src.bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect()
        });
        starts.partition_point(|&s| s <= pos) as u32
    }

    /// The variable a symbol names, with its type facts; `None` for functions.
    pub fn var_info(&self, sym: Symbol) -> Option<VarInfo> {
        match sym {
            Symbol::Local(id) => {
                let l = &self.locals[id.index()];
                Some(VarInfo {
                    var: Var::Local(id),
                    ty: l.ty,
                    shape: l.shape.clone(),
                    is_const: l.is_const,
                })
            }
            Symbol::Global(id) => {
                let g = &self.globals[id.index()];
                let shape = if g.dims.is_empty() {
                    Shape::Scalar
                } else {
                    Shape::Array(g.dims.clone())
                };
                Some(VarInfo {
                    var: Var::Global(id),
                    ty: g.ty,
                    shape,
                    is_const: g.is_const,
                })
            }
            _ => None,
        }
    }

    /// The constant value of a variable, if it is a (successfully evaluated) `const`.
    pub fn const_info(&self, var: Var) -> Option<&ConstInfo> {
        match var {
            Var::Local(id) => self.local_consts[id.index()].as_ref(),
            Var::Global(id) => self.global_consts[id.index()].as_ref(),
        }
    }

    /// Requires a user function `int main()`.
    fn check_main(&mut self) {
        match self.scopes.lookup_global("main") {
            Some(Symbol::Func(id)) if !self.funcs[id.index()].is_runtime => {
                let f = &self.funcs[id.index()];
                if f.ret != RetTy::Int {
                    let sp = f.span;
                    self.diags.error("`main` must return `int`", sp);
                }
            }
            _ => {
                self.diags
                    .push(Diagnostic::file_error("no `main` function defined"));
            }
        }
    }
}

/// Human-readable spelling of a type for messages (`int`, `float[][3]`, ...).
pub fn type_name(t: &Type) -> String {
    match t {
        Type::Int => "int".into(),
        Type::Float => "float".into(),
        Type::Void => "void".into(),
        Type::Str => "string".into(),
        Type::Ptr { elem, dims } => {
            let mut s = scalar_name(*elem).to_string();
            s.push_str("[]");
            for d in dims {
                s.push_str(&format!("[{d}]"));
            }
            s
        }
    }
}

/// `int` or `float`.
pub fn scalar_name(t: ScalarTy) -> &'static str {
    match t {
        ScalarTy::Int => "int",
        ScalarTy::Float => "float",
    }
}
