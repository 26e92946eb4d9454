//! Typed-AST checks: what `front::check` produces for small valid programs.

use front::tast::*;

fn ok(src: &str) -> Program {
    match front::check("t.sy", src) {
        Ok(p) => p,
        Err(d) => panic!("rejected:\n{}", d.render("t.sy", src)),
    }
}

fn main_body(p: &Program) -> &[Stmt] {
    let id = p.user_func("main").expect("main");
    p.func(id).body.as_deref().expect("body")
}

fn ret_expr(p: &Program) -> &Expr {
    main_body(p)
        .iter()
        .find_map(|s| match s {
            Stmt::Return(Some(e)) => Some(e),
            _ => None,
        })
        .expect("return")
}

#[test]
fn int_min_and_hex_literals() {
    let p = ok("int main() { return -2147483648 + 0x80000000 - 0xffffffff; }");
    // INT_MIN + INT_MIN - (-1) wraps to 1.
    assert_eq!(ret_expr(&p).kind, ExprKind::IntLit(1));
}

#[test]
fn starttime_becomes_a_call_with_the_line() {
    let p = ok("int main() {\n\n  starttime();\n  stoptime();\n  return 0;\n}");
    let body = main_body(&p);
    let calls: Vec<(String, Vec<Expr>)> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Expr(Expr {
                kind: ExprKind::Call { func, args },
                ..
            }) => Some((p.func(*func).name.clone(), args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls[0].0, "_sysy_starttime");
    assert_eq!(calls[0].1[0].kind, ExprKind::IntLit(3));
    assert_eq!(calls[1].0, "_sysy_stoptime");
    assert_eq!(calls[1].1[0].kind, ExprKind::IntLit(4));
}

#[test]
fn putf_gets_decoded_bytes() {
    let p = ok(r#"int main() { putf("%d\t\\\"\n", 1, 2.5); return 0; }"#);
    let Stmt::Expr(Expr {
        kind: ExprKind::Call { func, args },
        ..
    }) = &main_body(&p)[0]
    else {
        panic!("expected a call");
    };
    assert_eq!(p.func(*func).name, "putf");
    assert!(p.func(*func).variadic);
    assert_eq!(args[0].kind, ExprKind::StrLit(b"%d\t\\\"\n".to_vec()));
    assert_eq!(args[0].ty, Type::Str);
    assert_eq!(args[2].ty, Type::Float);
}

#[test]
fn runtime_names_can_be_redefined() {
    let p = ok("int getint() { return 3; }\nint rand() { return 4; }\n\
                int main() { return getint() + rand(); }");
    let ExprKind::Binary(BinOp::Add, a, b) = &ret_expr(&p).kind else {
        panic!()
    };
    for e in [a, b] {
        let ExprKind::Call { func, .. } = &e.kind else {
            panic!()
        };
        assert!(!p.func(*func).is_runtime);
        assert!(func.index() >= RUNTIME_FUNCS.len());
    }
    assert_eq!(p.funcs[0].name, "getint");
    assert!(p.funcs[0].is_runtime);
}

#[test]
fn implicit_conversions_are_explicit() {
    let p = ok("int main() { float f = 1; int i = f; f = i * f; return f; }");
    let body = main_body(&p);
    let Stmt::Decl {
        init: Init::Scalar(e),
        ..
    } = &body[0]
    else {
        panic!()
    };
    assert_eq!(e.kind, ExprKind::FloatLit(1.0));
    let Stmt::Decl {
        init: Init::Scalar(e),
        ..
    } = &body[1]
    else {
        panic!()
    };
    assert!(matches!(e.kind, ExprKind::FloatToInt(_)));
    assert_eq!(e.ty, Type::Int);
    let Stmt::Assign { rhs, .. } = &body[2] else {
        panic!()
    };
    let ExprKind::Binary(BinOp::Mul, l, _) = &rhs.kind else {
        panic!()
    };
    assert!(matches!(l.kind, ExprKind::IntToFloat(_)));
    assert_eq!(rhs.ty, Type::Float);
    assert!(matches!(ret_expr(&p).kind, ExprKind::FloatToInt(_)));
}

#[test]
fn comparisons_and_logic_as_values() {
    let p = ok("int main() { int a = 1; float b = 2; int x = !b; return a < b && x || !a; }");
    let e = ret_expr(&p);
    assert_eq!(e.ty, Type::Int);
    let ExprKind::Or(l, r) = &e.kind else {
        panic!()
    };
    let ExprKind::And(cmp, x) = &l.kind else {
        panic!()
    };
    let ExprKind::Binary(BinOp::Lt, ca, _) = &cmp.kind else {
        panic!()
    };
    assert_eq!(ca.ty, Type::Float);
    assert_eq!(cmp.ty, Type::Int);
    assert_eq!(x.ty, Type::Int);
    assert!(matches!(r.kind, ExprKind::Unary(UnOp::Not, _)));
}

#[test]
fn constants_fold() {
    let p = ok("const int N = 3, M = N * 2 + 1;\nconst float H = 0.5;\n\
                const int T[2][2] = {{1, 2}, {3}};\nint a[M][N];\n\
                int main() { int i = 1; return T[1][0] + N + T[i][1] + H * 2; }");
    assert_eq!(p.globals[4].dims, vec![7, 3]);
    assert_eq!(
        p.globals[3].init,
        GlobalInit::Array(vec![
            (0, ConstVal::Int(1)),
            (1, ConstVal::Int(2)),
            (2, ConstVal::Int(3))
        ])
    );
    // (T[1][0] + N) folds to 6; T[i][1] stays an index; H * 2 folds to 1.0.
    let ExprKind::FloatToInt(e) = &ret_expr(&p).kind else {
        panic!()
    };
    let ExprKind::Binary(BinOp::Add, l, r) = &e.kind else {
        panic!()
    };
    assert_eq!(r.kind, ExprKind::FloatLit(1.0));
    let ExprKind::IntToFloat(l) = &l.kind else {
        panic!()
    };
    let ExprKind::Binary(BinOp::Add, six, idx) = &l.kind else {
        panic!()
    };
    assert_eq!(six.kind, ExprKind::IntLit(6));
    assert!(matches!(idx.kind, ExprKind::Index { .. }));
}

#[test]
fn array_arguments_have_pointer_types() {
    let p = ok(
        "int f(int a[][3]) { return a[1][2]; }\nint g(int a[]) { return a[0]; }\n\
                int main() { int b[4][3]; int c[2][4][3]; \
                return f(b) + g(b[1]) + f(c[1]) + g(c[1][2]); }",
    );
    let f = p.func(p.user_func("f").unwrap());
    assert_eq!(
        f.param_tys,
        vec![Type::Ptr {
            elem: ScalarTy::Int,
            dims: vec![3]
        }]
    );
    assert_eq!(f.local(f.params[0]).shape, Shape::Pointer(vec![3]));
    let mut args = Vec::new();
    fn collect(e: &Expr, out: &mut Vec<Type>) {
        match &e.kind {
            ExprKind::Binary(_, a, b) => {
                collect(a, out);
                collect(b, out);
            }
            ExprKind::Call { args, .. } => out.extend(args.iter().map(|a| a.ty.clone())),
            _ => {}
        }
    }
    collect(ret_expr(&p), &mut args);
    let p3 = Type::Ptr {
        elem: ScalarTy::Int,
        dims: vec![3],
    };
    let p0 = Type::Ptr {
        elem: ScalarTy::Int,
        dims: vec![],
    };
    assert_eq!(args, vec![p3.clone(), p0.clone(), p3, p0]);
}

#[test]
fn initialisers_are_normalised_and_sparse() {
    let p = ok(
        "float g[1000000] = {0, 1.5, -0.0, 0};\nint h[2][3] = {1, {2}, 3};\nint z;\n\
                int main() { int l[3][2] = {{1}, 2, 3}; int u[5]; return 0; }",
    );
    assert_eq!(
        p.globals[0].init,
        GlobalInit::Array(vec![(1, ConstVal::Float(1.5)), (2, ConstVal::Float(-0.0))])
    );
    // As in C: `1` elides into h[0], `{2}` is the scalar h[0][1] (braces around a
    // scalar) and `3` is h[0][2].
    assert_eq!(
        p.globals[1].init,
        GlobalInit::Array(vec![
            (0, ConstVal::Int(1)),
            (1, ConstVal::Int(2)),
            (2, ConstVal::Int(3))
        ])
    );
    assert_eq!(p.globals[2].init, GlobalInit::Scalar(ConstVal::Int(0)));
    let body = main_body(&p);
    let Stmt::Decl {
        init: Init::Array(l),
        ..
    } = &body[0]
    else {
        panic!()
    };
    let idx: Vec<u32> = l.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, vec![0, 2, 3]);
    assert!(matches!(
        body[1],
        Stmt::Decl {
            init: Init::None,
            ..
        }
    ));
}

#[test]
fn shadowing_and_scopes() {
    let p = ok("int x = 1;\nint f() { return x; }\n\
                int main() { int f = 2; int x = f; { float x = 1.5; f = x; } return x; }");
    let main = p.func(p.user_func("main").unwrap());
    assert_eq!(main.locals.len(), 3);
    assert_eq!(main.locals[2].ty, ScalarTy::Float);
    let ExprKind::Var(Var::Local(id)) = ret_expr(&p).kind else {
        panic!()
    };
    assert_eq!(id, LocalId(1));
    let f = p.func(p.user_func("f").unwrap());
    let Some(body) = &f.body else { panic!() };
    assert_eq!(
        body[0],
        Stmt::Return(Some(Expr {
            kind: ExprKind::Var(Var::Global(GlobalId(0))),
            ty: Type::Int,
            span: Span { start: 28, end: 29 }
        }))
    );
}

#[test]
fn hundreds_of_parameters() {
    let n = 300;
    let params: Vec<String> = (0..n).map(|i| format!("int p{i}")).collect();
    let args: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let src = format!(
        "int f({}) {{ return p299; }}\nint main() {{ return f({}); }}",
        params.join(", "),
        args.join(", ")
    );
    let p = ok(&src);
    assert_eq!(p.func(p.user_func("f").unwrap()).params.len(), n);
}

#[test]
fn hex_and_decimal_float_literals() {
    let p = ok(
        "float a = 0x1.921fb6p+1, b = .5, c = 1., d = 1e-3, e = 0x.AP-3;\n\
                int main() { return 0; }",
    );
    let vals: Vec<GlobalInit> = p.globals.iter().map(|g| g.init.clone()).collect();
    assert_eq!(
        vals,
        [std::f32::consts::PI, 0.5, 1.0, 1e-3, 0.078125]
            .map(|v| GlobalInit::Scalar(ConstVal::Float(v)))
    );
}

#[test]
fn dump_is_readable() {
    let p = ok("int g[2] = {1};\nint main() { int x = g[0] + 1; if (x < 2) x = 3; return x; }");
    let d = front::dump(&p);
    assert_eq!(
        d,
        "global g0 g: int[2] = {0: 1}\n\
         fn f13 main() -> int\n  local l0 x: int\n  decl x@l0 = (add.i g@g0[0] 1)\n  \
         if (lt.i x@l0 2)\n    x@l0 = 3\n  return x@l0\n"
    );
}
