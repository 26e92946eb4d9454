//! Symbols and the stack of scopes.
//!
//! Scope 0 holds the runtime library, scope 1 the globals and user functions, deeper
//! scopes one block each (a function's parameters live in the scope of its body). A name
//! in an inner scope shadows outer ones, so a user function named like a runtime
//! function simply shadows it.

use rustc_hash::FxHashMap;

use crate::tast::{FuncId, GlobalId, LocalId};

/// What a name denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A local variable or parameter of the current function.
    Local(LocalId),
    /// A global variable.
    Global(GlobalId),
    /// A function (runtime or user).
    Func(FuncId),
    /// `starttime`: rewritten to `_sysy_starttime(LINE)`.
    StartTime,
    /// `stoptime`: rewritten to `_sysy_stoptime(LINE)`.
    StopTime,
}

/// A stack of scopes mapping names (borrowed from the source AST) to symbols.
#[derive(Debug)]
pub struct Scopes<'a> {
    stack: Vec<FxHashMap<&'a str, Symbol>>,
}

impl<'a> Default for Scopes<'a> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Scopes<'a> {
    /// A stack with one (the runtime library's) scope.
    pub fn new() -> Scopes<'a> {
        Scopes {
            stack: vec![FxHashMap::default()],
        }
    }

    /// Opens a scope.
    pub fn push(&mut self) {
        self.stack.push(FxHashMap::default());
    }

    /// Closes the innermost scope.
    pub fn pop(&mut self) {
        self.stack.pop();
    }

    /// Declares `name` in the innermost scope; returns the symbol it replaced in that same
    /// scope, if any (a redefinition).
    pub fn insert(&mut self, name: &'a str, sym: Symbol) -> Option<Symbol> {
        let top = self.stack.last_mut().expect("scope stack is never empty");
        top.insert(name, sym)
    }

    /// The symbol `name` has in the innermost scope only.
    pub fn lookup_innermost(&self, name: &str) -> Option<Symbol> {
        self.stack.last().and_then(|m| m.get(name).copied())
    }

    /// The symbol `name` denotes here (innermost declaration wins).
    pub fn lookup(&self, name: &str) -> Option<Symbol> {
        self.stack.iter().rev().find_map(|m| m.get(name).copied())
    }

    /// The symbol `name` denotes at file scope (globals, user functions, runtime).
    pub fn lookup_global(&self, name: &str) -> Option<Symbol> {
        self.stack
            .iter()
            .take(2)
            .rev()
            .find_map(|m| m.get(name).copied())
    }
}
