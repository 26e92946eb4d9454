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
///
/// Kept per name rather than per scope (the "symbol stack" form of block-structured
/// symbol tables, e.g. Aho, Lam, Sethi and Ullman, "Compilers", 2nd ed., 2.7): each
/// name has the stack of its visible declarations, innermost last, and each open
/// scope the names it declared, popped with it. A lookup then costs one hash probe
/// however deeply the scopes nest, instead of one per open scope.
#[derive(Debug)]
pub struct Scopes<'a> {
    /// Per name, its declarations in open scopes: (scope depth, symbol), outer first.
    by_name: FxHashMap<&'a str, Vec<(usize, Symbol)>>,
    /// Per open scope, outermost first, the names declared in it.
    declared: Vec<Vec<&'a str>>,
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
            by_name: FxHashMap::default(),
            declared: vec![Vec::new()],
        }
    }

    /// Opens a scope.
    pub fn push(&mut self) {
        self.declared.push(Vec::new());
    }

    /// Closes the innermost scope.
    pub fn pop(&mut self) {
        for name in self.declared.pop().unwrap_or_default() {
            if let Some(decls) = self.by_name.get_mut(name) {
                decls.pop();
            }
        }
    }

    /// Depth of the innermost scope (0 for the runtime library's).
    fn depth(&self) -> usize {
        self.declared.len().saturating_sub(1)
    }

    /// Declares `name` in the innermost scope; returns the symbol it replaced in that same
    /// scope, if any (a redefinition).
    pub fn insert(&mut self, name: &'a str, sym: Symbol) -> Option<Symbol> {
        let depth = self.depth();
        let decls = self.by_name.entry(name).or_default();
        match decls.last_mut() {
            Some(last) if last.0 == depth => Some(std::mem::replace(&mut last.1, sym)),
            _ => {
                decls.push((depth, sym));
                self.declared
                    .last_mut()
                    .expect("scope stack is never empty")
                    .push(name);
                None
            }
        }
    }

    /// The symbol `name` has in the innermost scope only.
    pub fn lookup_innermost(&self, name: &str) -> Option<Symbol> {
        let &(depth, sym) = self.by_name.get(name)?.last()?;
        (depth == self.depth()).then_some(sym)
    }

    /// The symbol `name` denotes here (innermost declaration wins).
    pub fn lookup(&self, name: &str) -> Option<Symbol> {
        self.by_name.get(name)?.last().map(|&(_, sym)| sym)
    }

    /// The symbol `name` denotes at file scope (globals, user functions, runtime).
    pub fn lookup_global(&self, name: &str) -> Option<Symbol> {
        self.by_name
            .get(name)?
            .iter()
            .rev()
            .find(|&&(depth, _)| depth <= 1)
            .map(|&(_, sym)| sym)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shadowing, redefinition in one scope, popping and file-scope lookups, as a
    /// stack of one map per scope answers them.
    #[test]
    fn symbol_stacks_answer_as_nested_maps() {
        let local = |i: u32| Symbol::Local(LocalId(i));
        let mut s = Scopes::new();
        s.insert("putint", Symbol::Func(FuncId(0)));
        s.push(); // globals
        s.insert("g", Symbol::Global(GlobalId(0)));
        s.push(); // a function body
        s.insert("x", local(0));
        assert_eq!(s.insert("x", local(1)), Some(local(0)));
        s.push();
        assert_eq!(s.lookup_innermost("x"), None);
        assert_eq!(s.insert("g", local(2)), None);
        assert_eq!(s.insert("putint", local(3)), None);
        assert_eq!(s.lookup("x"), Some(local(1)));
        assert_eq!(s.lookup("g"), Some(local(2)));
        assert_eq!(s.lookup_global("g"), Some(Symbol::Global(GlobalId(0))));
        assert_eq!(s.lookup_global("putint"), Some(Symbol::Func(FuncId(0))));
        assert_eq!(s.lookup_global("x"), None);
        s.pop();
        assert_eq!(s.lookup("g"), Some(Symbol::Global(GlobalId(0))));
        assert_eq!(s.lookup("putint"), Some(Symbol::Func(FuncId(0))));
        assert_eq!(s.lookup_innermost("x"), Some(local(1)));
        s.pop();
        assert_eq!(s.lookup("x"), None);
        assert_eq!(s.lookup("nothing"), None);
    }
}
