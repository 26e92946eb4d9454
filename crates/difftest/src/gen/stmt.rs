//! Statements: assignments, declarations, control flow, calls and prints.

use super::{Gen, LoopSym, Sym};
use crate::ast::*;
use crate::validate::init_exprs;

/// Most trips a loop makes.
const MAX_TRIPS: i64 = 20;

impl Gen<'_> {
    /// The statements of a block at nesting `depth`, in a new scope.
    pub(super) fn block_body(&mut self, depth: usize) -> Vec<Stmt> {
        let keep_scope = depth == 0;
        if !keep_scope {
            self.scopes.push(Vec::new());
        }
        let mut out = Vec::new();
        // The function's top level takes what nested blocks leave.
        let count = if depth == 0 {
            usize::MAX
        } else {
            self.between(1, 5) as usize
        };
        while out.len() < count && self.stmts_left > 0 {
            self.stmts_left -= 1;
            self.cost += self.mult;
            if let Some(s) = self.stmt(depth) {
                out.push(s);
            }
        }
        if !keep_scope {
            self.scopes.pop();
        }
        out
    }

    fn stmt(&mut self, depth: usize) -> Option<Stmt> {
        let nest = depth < self.cfg.max_depth;
        let in_loop = !self.loops.is_empty();
        let impure = !self.pure_fn;
        let weights = [
            30,                                             // assign
            12,                                             // declaration
            if nest { 10 } else { 0 },                      // if
            if nest { 9 } else { 0 },                       // loop
            if impure { 6 } else { 0 },                     // call
            if impure { 4 } else { 0 },                     // print
            if nest { 2 } else { 0 },                       // block
            if in_loop { 4 } else { 0 },                    // break / continue
            if !self.in_main && depth > 0 { 2 } else { 0 }, // early return
            3,                                              // fill
            if nest && impure { 2 } else { 0 },             // repeat loop
        ];
        match self.weighted(&weights) {
            0 => self.assign(),
            1 => Some(self.local_decl()),
            2 => Some(self.if_stmt(depth)),
            3 => self.loop_stmt(depth),
            4 => self.any_call().map(Stmt::Call),
            5 => Some(self.print()),
            6 => Some(Stmt::Block(self.block_body(depth + 1))),
            7 => Some(self.jump()),
            8 => Some(self.early_return()),
            9 => self.fill(),
            _ => self.repeat(),
        }
    }

    /// Table initialisation: a counted loop storing one constant into a run of an
    /// array's last dimension (`0`, `-1`, `0x3f3f3f3f`, or values whose bytes
    /// differ), sometimes downwards, sometimes inside a loop over the rows.
    fn fill(&mut self) -> Option<Stmt> {
        let s = self.writable_array()?;
        let len = *s.shape.last().expect("an array") as i32;
        let rows = s.shape.len() >= 2 && self.chance(0.3);
        let (row_var, row_len) = (
            self.name("i"),
            s.shape[s.shape.len() - 2.min(s.shape.len())],
        );
        let stores = len as u64 * if rows { row_len as u64 } else { 1 };
        if !self.afford(stores) {
            return None;
        }
        let value = match (s.ty, self.between(0, 5)) {
            (Ty::Float, 0 | 1) => Expr::Float(0.0),
            (Ty::Float, _) => Expr::Float(self.between(-3, 3) as f32 * 0.5),
            (_, 0 | 1) => Expr::Int(0),
            (_, 2) => Expr::Int(-1),
            (_, 3) => Expr::Int(0x3f3f_3f3f),
            _ => Expr::Int(self.between(-5, 300) as i32),
        };
        let mut lead = self.indices(&s.shape[..s.shape.len() - 1]);
        if rows {
            let mut sym = Self::local(&row_var, Ty::Int, vec![]);
            sym.loop_var = true;
            self.declare(sym);
            let k = lead.len() - 1;
            lead[k] = Index::Loop {
                var: row_var.clone(),
                offset: 0,
            };
        }
        let (start, end) = (self.between(0, (len - 1) as i64) as i32, len);
        let down = self.chance(0.2);
        let (start, end, step) = if down {
            (end - 1, start - 1, -1)
        } else {
            (start, end, 1)
        };
        let var = self.name("i");
        let mut sym = Self::local(&var, Ty::Int, vec![]);
        sym.loop_var = true;
        // Inside the row loop, the inner counter is declared in its body: not
        // visible after it.
        if rows {
            self.scopes.push(Vec::new());
        }
        self.declare(sym);
        if rows {
            self.scopes.pop();
        }
        let mut index = lead;
        index.push(Index::Loop {
            var: var.clone(),
            offset: 0,
        });
        let store = Stmt::Assign {
            target: LValue::Elem {
                name: s.name.clone(),
                ty: s.ty,
                index,
            },
            value,
        };
        let inner = Stmt::Loop {
            var,
            start,
            end,
            step,
            cond: None,
            body: vec![store],
        };
        Some(if rows {
            Stmt::Loop {
                var: row_var,
                start: 0,
                end: row_len as i32,
                step: 1,
                cond: None,
                body: vec![inner],
            }
        } else {
            inner
        })
    }

    /// A benchmark's repeat loop around its kernel: each of 2 to 4 iterations
    /// rewrites a run `a[w..n)` of an array's last dimension, then updates a run in
    /// place from itself (`a[j] = a[j + d] * 3 + 1`, `* 0.5 + 1.0` for floats).
    /// When the update reads only what the rewrite wrote, every iteration does the
    /// same work (and the idempotent-loop pass runs the loop once); when `d` or the
    /// update's run reaches outside `[w, n)`, each iteration reads what the one
    /// before wrote.
    fn repeat(&mut self) -> Option<Stmt> {
        let s = self.writable_array()?;
        let len = *s.shape.last().expect("an array") as i32;
        let reps = self.between(2, 4) as i32;
        if !self.afford(2 * len as u64 * reps as u64) {
            return None;
        }
        let lead = self.indices(&s.shape[..s.shape.len() - 1]);
        let value = if self.chance(0.5) {
            self.const_scalar(s.ty)
        } else {
            self.expr(s.ty, 1)
        };
        let w = if self.chance(0.6) {
            0
        } else {
            self.between(0, (len - 1) as i64) as i32
        };
        let d = *self.pick(&[0, 0, 0, 1, -1]);
        let d = if len < 2 { 0 } else { d };
        // j + d stays in [0, len) for j in [u0, u1).
        let u0 = self.between(i64::from((-d).max(0)), i64::from(len - 1 - d.max(0))) as i32;
        let u1 = self.between(i64::from(u0 + 1), i64::from((len - d).min(len))) as i32;
        let (k, i, j) = (self.name("k"), self.name("i"), self.name("j"));
        // `k` is declared before the repeat loop; `i` and `j` in its body, so they
        // are not visible after it.
        for (v, inner) in [(&k, false), (&i, true), (&j, true)] {
            let mut sym = Self::local(v, Ty::Int, vec![]);
            sym.loop_var = true;
            if inner {
                self.scopes.push(Vec::new());
            }
            self.declare(sym);
            if inner {
                self.scopes.pop();
            }
        }
        let elem = |var: &str, offset: i32| {
            let mut index = lead.clone();
            index.push(Index::Loop {
                var: var.to_string(),
                offset,
            });
            index
        };
        let rewrite = Stmt::Loop {
            var: i.clone(),
            start: w,
            end: len,
            step: 1,
            cond: None,
            body: vec![Stmt::Assign {
                target: LValue::Elem {
                    name: s.name.clone(),
                    ty: s.ty,
                    index: elem(&i, 0),
                },
                value,
            }],
        };
        let (scale, one) = match s.ty {
            Ty::Int => (Expr::Int(3), Expr::Int(1)),
            Ty::Float => (Expr::Float(0.5), Expr::Float(1.0)),
        };
        let read = Expr::Elem {
            name: s.name.clone(),
            ty: s.ty,
            index: elem(&j, d),
        };
        let update = Stmt::Loop {
            var: j.clone(),
            start: u0,
            end: u1,
            step: 1,
            cond: None,
            body: vec![Stmt::Assign {
                target: LValue::Elem {
                    name: s.name.clone(),
                    ty: s.ty,
                    index: elem(&j, 0),
                },
                value: Expr::bin(BinOp::Add, Expr::bin(BinOp::Mul, read, scale), one),
            }],
        };
        Some(Stmt::Loop {
            var: k,
            start: 0,
            end: reps,
            step: 1,
            cond: None,
            body: vec![rewrite, update],
        })
    }

    /// A random array this function may assign.
    fn writable_array(&mut self) -> Option<Sym> {
        let arrays: Vec<Sym> = self
            .writable()
            .into_iter()
            .filter(|s| !s.shape.is_empty())
            .collect();
        (!arrays.is_empty()).then(|| self.pick(&arrays).clone())
    }

    /// Whether `stores` more stores (each run `mult` times) fit the budget; if so
    /// they are counted.
    fn afford(&mut self, stores: u64) -> bool {
        let room = self.budget.saturating_sub(self.cost) / self.mult.max(1);
        if room < stores {
            return false;
        }
        self.cost += self.mult * stores;
        true
    }

    /// Scalars and arrays this function may assign.
    fn writable(&self) -> Vec<Sym> {
        self.visible()
            .into_iter()
            .filter(|s| !s.is_const && !s.loop_var)
            .filter(|s| !self.pure_fn || (!s.global && !s.param_array))
            .collect()
    }

    fn assign(&mut self) -> Option<Stmt> {
        let cands = self.writable();
        if cands.is_empty() {
            return None;
        }
        let s = self.pick(&cands).clone();
        let call = if self.pure_fn || !self.chance(0.15) {
            None
        } else {
            let ret = Some(self.any_ty_for(s.ty));
            self.impure_call(Some(ret))
        };
        let target = if s.shape.is_empty() {
            LValue::Var {
                name: s.name.clone(),
                ty: s.ty,
            }
        } else {
            // With an impure call on the right, the element's address must not
            // depend on what the call changes: no wrapped (computed) indices.
            let mut index = self.indices(&s.shape);
            if call.is_some() {
                for (i, ix) in index.iter_mut().enumerate() {
                    if matches!(ix, Index::Wrap { .. }) {
                        *ix = Index::Const(i % s.shape[i]);
                    }
                }
            }
            LValue::Elem {
                name: s.name.clone(),
                ty: s.ty,
                index,
            }
        };
        let value = match call {
            Some(c) => Expr::Call(c),
            None => {
                let ty = self.any_ty_for(s.ty);
                let depth = self.cfg.max_expr_depth;
                self.expr(ty, depth)
            }
        };
        Some(Stmt::Assign { target, value })
    }

    /// Usually `ty`, sometimes the other type (a conversion).
    pub(super) fn any_ty_for(&mut self, ty: Ty) -> Ty {
        if self.chance(0.85) {
            ty
        } else if ty == Ty::Int {
            Ty::Float
        } else {
            Ty::Int
        }
    }

    fn local_decl(&mut self) -> Stmt {
        let ty = if self.chance(0.6) { Ty::Int } else { Ty::Float };
        if self.chance(0.3) {
            // An array with an initialiser list of runtime values.
            let rank = self.weighted(&[3, 2]) + 1;
            let dims = self.maybe_big_dims(rank);
            let shape: Vec<usize> = dims.iter().map(|d| d.size).collect();
            // Initialising costs about a statement per few elements.
            let elems = shape.iter().product::<usize>() as u64;
            self.cost += self.mult.saturating_mul(elems / 8);
            let init = self.init_list(&shape, ty, false, &mut |g, ty| match ty {
                Ty::Int => g.int_expr(2),
                Ty::Float => g.small_float_expr(2),
            });
            let name = match &init {
                Init::List(items) => self.local_name(&init_exprs(items)),
                Init::Expr(e) => self.local_name(&[e]),
            };
            self.declare(Self::local(&name, ty, shape));
            return Stmt::Decl(Decl {
                name,
                ty,
                is_const: false,
                dims,
                init: Some(init),
            });
        }
        if ty == Ty::Int && self.chance(0.1) {
            let v = self.between(-20, 20) as i32;
            let e = self.const_int_expr(v);
            let name = self.local_name(&[&e]);
            let mut sym = Self::local(&name, ty, vec![]);
            sym.is_const = true;
            sym.value = Some(v);
            self.declare(sym);
            return Stmt::Decl(Decl {
                name,
                ty,
                is_const: true,
                dims: vec![],
                init: Some(Init::Expr(e)),
            });
        }
        let init = match self.chance(0.1).then(|| self.impure_call(Some(Some(ty)))) {
            Some(Some(c)) => Expr::Call(c),
            _ => {
                let t = self.any_ty_for(ty);
                self.expr(t, 3)
            }
        };
        // Declared after its initialiser is built: it may not read itself.
        let name = self.local_name(&[&init]);
        self.declare(Self::local(&name, ty, vec![]));
        Stmt::Decl(Decl {
            name,
            ty,
            is_const: false,
            dims: vec![],
            init: Some(Init::Expr(init)),
        })
    }

    fn if_stmt(&mut self, depth: usize) -> Stmt {
        let cond = self.cond(3, true);
        let then = self.block_body(depth + 1);
        let els = self.chance(0.4).then(|| self.block_body(depth + 1));
        Stmt::If { cond, then, els }
    }

    fn loop_stmt(&mut self, depth: usize) -> Option<Stmt> {
        let mut trips = match self.weighted(&[1, 2, 5, 4, 1]) {
            0 => 0,
            1 => 1,
            2 => self.between(2, 4),
            3 => self.between(5, 10),
            _ => self.between(11, MAX_TRIPS),
        };
        // Shrink the loop to what the budget allows (a body of a few statements).
        let room = self.budget.saturating_sub(self.cost) / (self.mult * 4).max(1);
        trips = trips.min(room as i64);
        if trips < 1 && self.chance(0.8) {
            return None;
        }
        let step: i32 = *self.pick(&[1, 1, 1, 1, 2, 3, -1, -1, -2]);
        let start = if step > 0 {
            self.between(-3, 5) as i32
        } else {
            self.between(0, 12) as i32
        };
        // `end` need not be on the step grid: the trip count is the same.
        let slack = self.between(0, step.abs() as i64 - 1) as i32;
        let end = if trips == 0 {
            start - step.signum() * slack
        } else {
            start + (trips as i32 - 1) * step + step.signum() * (1 + slack)
        };
        let var = self.name("i");
        let (min, max) = loop_range(start, end, step);
        let mut sym = Self::local(&var, Ty::Int, vec![]);
        sym.loop_var = true;
        self.declare(sym);
        let cond = self.chance(0.25).then(|| self.cond(1, true));
        self.loops.push(LoopSym {
            var: var.clone(),
            step,
            min: min as i32,
            max: max as i32,
        });
        let saved = self.mult;
        self.mult = self.mult.saturating_mul(trips.max(1) as u64);
        let body = self.block_body(depth + 1);
        self.mult = saved;
        self.loops.pop();
        Some(Stmt::Loop {
            var,
            start,
            end,
            step,
            cond,
            body,
        })
    }

    /// `if (cond) break;` or `if (cond) continue;` (sometimes unconditional).
    fn jump(&mut self) -> Stmt {
        let l = self.loops.last().expect("inside a loop").clone();
        let j = if self.chance(0.5) {
            Stmt::Break
        } else {
            Stmt::Continue {
                var: l.var,
                step: l.step,
            }
        };
        if self.chance(0.85) {
            let cond = self.cond(2, true);
            Stmt::If {
                cond,
                then: vec![j],
                els: None,
            }
        } else {
            j
        }
    }

    fn early_return(&mut self) -> Stmt {
        let value = self.ret.map(|ty| {
            let call = self.chance(0.3).then(|| self.tail_call(ty)).flatten();
            match call {
                Some(c) => Expr::Call(c),
                None => {
                    let depth = self.cfg.max_expr_depth;
                    self.expr(ty, depth)
                }
            }
        });
        let cond = self.cond(2, true);
        Stmt::If {
            cond,
            then: vec![Stmt::Return(value)],
            els: None,
        }
    }

    fn print(&mut self) -> Stmt {
        match self.weighted(&[4, 2, 1, 3]) {
            0 => Stmt::Print(Print::Int(self.int_expr(3))),
            1 => Stmt::Print(Print::Float(self.float_expr(3))),
            3 => {
                // `putf` with ints and floats mixed, floats often converted from
                // ints (`i * 1.0`).
                let n = self.between(1, 4);
                let args = (0..n)
                    .map(|_| match self.weighted(&[2, 2, 1]) {
                        0 => self.int_expr(2),
                        1 => self.float_expr(2),
                        _ => Expr::bin(BinOp::Mul, self.int_expr(1), Expr::Float(1.0)),
                    })
                    .collect();
                Stmt::Print(Print::Format(args))
            }
            _ => {
                // A row of some visible array.
                let arrays: Vec<Sym> = self
                    .visible()
                    .into_iter()
                    .filter(|s| !s.shape.is_empty() && !s.is_const)
                    .collect();
                if arrays.is_empty() {
                    return Stmt::Print(Print::Int(self.int_expr(2)));
                }
                let s = self.pick(&arrays).clone();
                let k = s.shape.len() - 1;
                let index = self.indices(&s.shape[..k]);
                let n = self.between(1, s.shape[k] as i64) as usize;
                Stmt::Print(Print::Array {
                    ty: s.ty,
                    n,
                    array: ArrayRef {
                        name: s.name,
                        index,
                    },
                })
            }
        }
    }
}
