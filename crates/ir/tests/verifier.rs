//! Verifier checks that text cannot express (entities removed from the layout, result
//! types that disagree with the opcode), the unreachable-code rule, and the example of
//! `docs/ir-text.md`.

use ir::{BinOp, FuncBuilder, Function, InstKind, Module, Signature, Type};

fn parse(src: &str) -> Module {
    ir::parse_module(src).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(m: &Module) -> Vec<String> {
    match ir::verify_module(m) {
        Ok(()) => Vec::new(),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

fn main_fn(m: &mut Module) -> &mut Function {
    let id = m.func_by_name("main").expect("@main exists");
    &mut m.funcs[id]
}

#[test]
fn doc_example_verifies() {
    let doc = include_str!("../../../docs/ir-text.md");
    let start = doc.find("```\n").expect("code block") + 4;
    let end = start + doc[start..].find("```").expect("end of code block");
    let src = format!("{}\ndeclare @putint(i32) -> void\n", &doc[start..end]);
    let m = parse(&src);
    assert_eq!(errors(&m), Vec::<String>::new());
    let printed = ir::print_module(&m);
    assert!(
        printed.contains("global @fmt: [i8; 4] = c\"%d\\0A\\00\""),
        "{printed}"
    );
    assert!(printed.contains("  %9 = fadd 1.5, -0.0\n"), "{printed}");
}

#[test]
fn use_of_removed_definition() {
    let mut m =
        parse("func @main() -> i32 {\nbb0:\n  %0 = add 1, 2\n  %1 = add %0, 3\n  ret %1\n}\n");
    let f = main_fn(&mut m);
    let entry = f.entry_block();
    let first = f.layout.first_inst(entry).expect("an instruction");
    let dead = f.inst_result(first).expect("a result");
    f.layout.remove_inst(first);
    assert_eq!(
        errors(&m),
        vec![format!(
            "in @main, bb0: %0 = add %{dead}, 3: use of %{dead} whose defining instruction was removed"
        )]
    );
}

#[test]
fn use_of_parameter_of_removed_block() {
    let mut m = parse(
        "func @main() -> i32 {\nbb0:\n  ret 0\nbb1(%p: i32):\n  jump bb2\nbb2:\n  %0 = add %p, 1\n  ret %0\n}\n",
    );
    let f = main_fn(&mut m);
    let b1 = f.layout.blocks().nth(1).expect("bb1");
    let p = f.block_params(b1)[0];
    f.layout.remove_block(b1);
    let errs = errors(&m);
    assert_eq!(
        errs,
        vec![format!(
            "in @main, bb1: %0 = add %{p}, 1: use of %{p} whose block or parameter was removed"
        )]
    );
}

#[test]
fn unreachable_blocks_are_type_checked_but_not_dominance_checked() {
    let m = parse(
        "func @main() -> i32 {\nbb0:\n  ret 0\nbb1:\n  %0 = add %1, 1.5\n  jump bb2\nbb2:\n  %1 = add 1, 2\n  jump bb1\n}\n",
    );
    assert_eq!(
        errors(&m),
        vec!["in @main, bb1: %0 = add %1, 1.5: operand 1.5 has type f32, expected i32"]
    );
}

#[test]
fn result_types_must_match_the_opcode() {
    let mut m = Module::new();
    let callee = m.declare_function(
        "get",
        Signature {
            params: vec![],
            ret: Type::I32,
            variadic: false,
        },
    );
    let mut f = Function::new("main", Signature::default());
    let b = f.append_new_block();
    let one = f.iconst(1);
    let p = f.iconst(0);
    f.append_inst(
        b,
        InstKind::Binary {
            op: BinOp::Add,
            args: [one, one],
        },
        Type::F32,
    );
    f.append_inst(b, InstKind::Store { value: one, ptr: p }, Type::I32);
    f.append_inst(
        b,
        InstKind::Call {
            callee,
            args: Box::new([]),
        },
        Type::Void,
    );
    f.append_inst(b, InstKind::Ret { value: None }, Type::Void);
    m.add_function(f);
    assert_eq!(
        errors(&m),
        vec![
            "in @main, bb0: %0 = add 1, 1: result has type f32, expected i32",
            "in @main, bb0: %1 = store 1, 0: address 0 has type i32, expected ptr",
            "in @main, bb0: %1 = store 1, 0: has a result %1 but yields no value",
            "in @main, bb0: call @get(): missing result of type i32",
        ]
    );
}

#[test]
fn branch_to_a_block_outside_the_layout_and_empty_blocks() {
    let mut m = Module::new();
    let mut f = Function::new("main", Signature::default());
    let entry = f.append_new_block();
    let detached = f.create_block();
    let empty = f.append_new_block();
    let mut b = FuncBuilder::new(&mut f);
    b.switch_to_block(entry);
    let c = b.iconst(1);
    b.br(c, detached, vec![], empty, vec![]);
    m.add_function(f);
    assert_eq!(
        errors(&m),
        vec![
            "in @main, bb0: br 1, block1, bb1: branch to block1, which is not in the layout",
            "in @main, bb1: block is empty (no terminator)",
        ]
    );
}

#[test]
fn duplicate_names_and_single_function_verification() {
    let mut m =
        parse("func @main() -> i32 {\nbb0:\n  ret 0\n}\nfunc @bad() -> i32 {\nbb0:\n  ret\n}\n");
    let main = m.func_by_name("main").expect("@main");
    assert!(ir::verify_function(&m, &m.funcs[main]).is_ok());
    let bad = m.func_by_name("bad").expect("@bad");
    let e = ir::verify_function(&m, &m.funcs[bad]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "in @bad, bb0: ret: missing return value of type i32"
    );
    m.declare_function("main", Signature::default());
    let errs = errors(&m);
    assert_eq!(errs[0], "in @main: function name is used twice");
    assert_eq!(errs.len(), 2);
}

#[test]
fn integer_comparisons_accept_two_pointers_only() {
    let ok = parse(
        "func @main() -> i32 {\nbb0:\n  %a = alloc [i32; 4]\n  %b = gep %a, 1, 4\n  %c = slt %a, %b\n  ret %c\n}\n",
    );
    assert_eq!(errors(&ok), Vec::<String>::new());
    for bad in ["slt %a, 1", "flt %a, %b"] {
        let src = format!(
            "func @main() -> i32 {{\nbb0:\n  %a = alloc [i32; 4]\n  %b = gep %a, 1, 4\n  %c = {bad}\n  ret %c\n}}\n"
        );
        let m = ir::parse_module(&src);
        let rejected = m.map_or(true, |m| !errors(&m).is_empty());
        assert!(rejected, "{bad}");
    }
}
