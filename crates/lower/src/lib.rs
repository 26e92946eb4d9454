//! Lowering from the typed AST (`front::tast`) to SSA IR.
//!
//! Two ways to reach SSA form, selected by the caller:
//! - **Braun** (default): scalar locals never live in memory (SysY cannot take their
//!   address); every read and write goes through the on-the-fly [`SsaBuilder`].
//! - **Memory form**: every scalar local gets an `alloc` and is read and written with
//!   `load`/`store`; the `opt` crate's mem2reg (Cytron et al.) then builds SSA.
//!
//! Arrays always live in memory: local arrays are `alloc`s in the entry block, globals
//! are module globals, array parameters are pointers.

mod function;
mod globals;
pub mod ssa_builder;

pub use ssa_builder::{SsaBuilder, Var};

use front::tast;
use ir::{FuncId, Module, Signature};

/// Lowers a checked program to an IR module. With `memory_form`, scalar locals are
/// kept in `alloc`ed slots (for mem2reg); otherwise SSA is built while lowering.
pub fn lower_program(program: &tast::Program, memory_form: bool) -> Module {
    let mut module = Module::new();
    let globals = globals::lower_globals(program, &mut module);

    // Declare every user function first, so calls can refer forward and recursively.
    let mut func_ids: Vec<Option<FuncId>> = vec![None; program.funcs.len()];
    for (i, f) in program.funcs.iter().enumerate() {
        if f.body.is_some() {
            func_ids[i] = Some(module.declare_function(&f.name, signature(f)));
        }
    }
    let mut ctx = function::ModuleCtx {
        program,
        globals,
        func_ids,
        strings: 0,
        images: 0,
        memory_form,
    };
    for (i, f) in program.funcs.iter().enumerate() {
        if let Some(body) = &f.body {
            let id = ctx.func_ids[i].expect("declared above");
            let lowered = function::lower_function(&mut ctx, &mut module, f, body);
            module.funcs[id] = lowered;
        }
    }
    module
}

/// The IR type of a tast type (pointers and strings are `ptr`).
pub(crate) fn ir_type(t: &tast::Type) -> ir::Type {
    match t {
        tast::Type::Int => ir::Type::I32,
        tast::Type::Float => ir::Type::F32,
        tast::Type::Ptr { .. } | tast::Type::Str => ir::Type::Ptr,
        tast::Type::Void => ir::Type::Void,
    }
}

/// The IR type of a scalar type.
pub(crate) fn scalar_type(t: tast::ScalarTy) -> ir::Type {
    match t {
        tast::ScalarTy::Int => ir::Type::I32,
        tast::ScalarTy::Float => ir::Type::F32,
    }
}

/// The IR signature of a function.
pub(crate) fn signature(f: &tast::Function) -> Signature {
    Signature {
        params: f.param_tys.iter().map(ir_type).collect(),
        ret: ir_type(&f.ret.into()),
        variadic: f.variadic,
    }
}
