//! Failures of the interpreted program are errors with clear messages, never panics:
//! out-of-bounds accesses, division by zero, step limit, stack exhaustion, calls of
//! undefined functions, malformed IR. Also the exit status, step count, timer report
//! and partial output on failure.

use interp::{run_module, run_with_io, ErrorKind, RunOptions};

fn parse(src: &str) -> ir::Module {
    ir::parse_module(src).unwrap_or_else(|e| panic!("parse error {e} in\n{src}"))
}

fn opts() -> RunOptions {
    RunOptions {
        wall_clock_timers: false,
        ..Default::default()
    }
}

fn run_err(src: &str, opts: &RunOptions) -> interp::InterpError {
    match run_module(&parse(src), b"", opts) {
        Ok(out) => panic!("expected an error, got {out:?}"),
        Err(e) => e,
    }
}

#[test]
fn null_load_is_out_of_bounds() {
    let e = run_err(
        "func @main() -> i32 {\nbb0:\n  %p = gep @g, -1024, 4\n  %v = load i32, %p\n  ret %v\n}\nglobal @g: i32 = 1\n",
        &opts(),
    );
    assert_eq!(
        e.kind,
        ErrorKind::OutOfBounds {
            addr: interp::NULL_GUARD - 4096,
            size: 4,
            write: false
        }
    );
    assert_eq!(e.func.as_deref(), Some("main"));
    assert_eq!(
        e.to_string(),
        "in @main: out-of-bounds load of 4 bytes at address 0x0"
    );
}

#[test]
fn store_past_the_stack_top_is_out_of_bounds() {
    let src = "func @main() -> i32 {\nbb0:\n  %a = alloc [i32; 4]\n  %p = gep %a, 100, 4\n  store 1, %p\n  ret 0\n}\n";
    let e = run_err(src, &opts());
    assert!(
        matches!(
            e.kind,
            ErrorKind::OutOfBounds {
                size: 4,
                write: true,
                ..
            }
        ),
        "{e}"
    );
    // A huge negative index wraps to a huge address: still a clean error.
    let src = "func @main() -> i32 {\nbb0:\n  %a = alloc [i32; 4]\n  %p = gep %a, -2147483648, 4096\n  %v = load i32, %p\n  ret %v\n}\n";
    assert!(matches!(
        run_err(src, &opts()).kind,
        ErrorKind::OutOfBounds { .. }
    ));
}

#[test]
fn division_and_remainder_by_zero() {
    for op in ["sdiv", "srem"] {
        let src = format!(
            "func @f(i32) -> i32 {{\nbb0(%x: i32):\n  %q = {op} 5, %x\n  ret %q\n}}\nfunc @main() -> i32 {{\nbb0:\n  %r = call @f(0)\n  ret %r\n}}\n"
        );
        let e = run_err(&src, &opts());
        assert_eq!(e.kind, ErrorKind::DivisionByZero);
        assert_eq!(e.func.as_deref(), Some("f"));
    }
}

const INFINITE_LOOP: &str = "func @main() -> i32 {\nbb0:\n  jump bb1(0)\nbb1(%i: i32):\n  %j = add %i, 1\n  jump bb1(%j)\n}\n";

#[test]
fn step_limit() {
    let o = RunOptions {
        max_steps: Some(10_000),
        ..opts()
    };
    let e = run_err(INFINITE_LOOP, &o);
    assert_eq!(e.kind, ErrorKind::StepLimit { limit: 10_000 });
    assert!(e.to_string().contains("step limit exceeded"));
}

#[test]
fn infinite_recursion_exhausts_the_stack() {
    let src = "func @f(i32) -> i32 {\nbb0(%x: i32):\n  %y = add %x, 1\n  %r = call @f(%y)\n  ret %r\n}\nfunc @main() -> i32 {\nbb0:\n  %r = call @f(0)\n  ret %r\n}\n";
    let o = RunOptions {
        stack_limit_bytes: 1 << 20,
        ..opts()
    };
    let e = run_err(src, &o);
    assert_eq!(e.kind, ErrorKind::StackOverflow { limit: 1 << 20 });
    assert!(e.to_string().contains("stack exhausted"), "{e}");
}

#[test]
fn huge_local_array_exhausts_the_stack_but_fits_a_bigger_one() {
    let src = "func @main() -> i32 {\nbb0:\n  %a = alloc [i32; 5000000]\n  %p = gep %a, 4999999, 4\n  store 3, %p\n  %v = load i32, %p\n  ret %v\n}\n";
    let small = RunOptions {
        stack_limit_bytes: 16 << 20,
        ..opts()
    };
    let e = run_err(src, &small);
    assert!(matches!(e.kind, ErrorKind::StackOverflow { .. }), "{e}");
    let big = RunOptions {
        stack_limit_bytes: 32 << 20,
        ..opts()
    };
    assert_eq!(run_module(&parse(src), b"", &big).unwrap().exit_code, 3);
}

#[test]
fn undefined_function_only_when_called() {
    let src = "declare @mystery(i32) -> i32\nfunc @main() -> i32 {\nbb0:\n  %r = call @mystery(1)\n  ret %r\n}\n";
    let e = run_err(src, &opts());
    assert_eq!(
        e.kind,
        ErrorKind::UndefinedFunction {
            name: "mystery".into()
        }
    );
    let src = "declare @mystery(i32) -> i32\nfunc @main() -> i32 {\nbb0:\n  ret 0\n}\n";
    assert_eq!(run_module(&parse(src), b"", &opts()).unwrap().exit_code, 0);
}

#[test]
fn user_function_named_like_the_runtime_wins() {
    let src = "declare @putch(i32) -> void\nfunc @getint() -> i32 {\nbb0:\n  ret 65\n}\nfunc @main() -> i32 {\nbb0:\n  %x = call @getint()\n  call @putch(%x)\n  ret 0\n}\n";
    let out = run_module(&parse(src), b"12", &opts()).unwrap();
    assert_eq!(out.stdout, b"A");
}

#[test]
fn missing_main() {
    let e = run_err("declare @main() -> i32\n", &opts());
    assert_eq!(e.kind, ErrorKind::NoMain);
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    use ir::{FuncBuilder, Function, Module, Signature, Type};
    let mut m = Module::new();
    let mut f = Function::new(
        "main",
        Signature {
            params: vec![],
            ret: Type::I32,
            variadic: false,
        },
    );
    {
        let mut b = FuncBuilder::new(&mut f);
        let entry = b.func.append_new_block();
        let next = b.func.append_new_block();
        b.func.append_block_param(next, Type::I32);
        b.switch_to_block(entry);
        b.jump(next, vec![]); // missing argument
        b.switch_to_block(next);
        let z = b.iconst(0);
        b.ret(Some(z));
    }
    m.add_function(f);
    let e = run_module(&m, b"", &opts()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::InvalidIr(_)), "{e}");

    // A block without terminator.
    let mut m = Module::new();
    let mut f = Function::new("main", Signature::default());
    let entry = f.append_new_block();
    let mut b = FuncBuilder::new(&mut f);
    b.switch_to_block(entry);
    let one = b.iconst(1);
    b.binary(ir::BinOp::Add, one, one);
    m.add_function(f);
    let e = run_module(&m, b"", &opts()).unwrap_err();
    assert!(e.to_string().contains("terminator"), "{e}");
}

#[test]
fn exit_status_steps_and_timer_report() {
    let src = "declare @_sysy_starttime(i32) -> void\ndeclare @_sysy_stoptime(i32) -> void\nfunc @main() -> i32 {\nentry:\n  call @_sysy_starttime(12)\n  jump head(1, 0)\nhead(%i: i32, %s: i32):\n  %c = sle %i, 100\n  br %c, body, exit\nbody:\n  %s2 = add %s, %i\n  %i2 = add %i, 1\n  jump head(%i2, %s2)\nexit:\n  call @_sysy_stoptime(345)\n  ret %s\n}\n";
    let out = run_module(&parse(src), b"", &opts()).unwrap();
    assert_eq!(out.exit_code, 5050 & 0xff);
    // call + jump, 101 x (sle, br), 100 x (add, add, jump), call + ret
    assert_eq!(out.steps, 2 + 101 * 2 + 100 * 3 + 2);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "Timer@0012-0345: 0H-0M-0S-0us\nTOTAL: 0H-0M-0S-0us\n"
    );
}

#[test]
fn output_before_a_failure_is_flushed() {
    let src = "declare @putch(i32) -> void\nfunc @main() -> i32 {\nbb0:\n  call @putch(111)\n  call @putch(107)\n  %q = sdiv 1, 0\n  ret %q\n}\n";
    let m = parse(src);
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let e = run_with_io(&m, &mut &b""[..], &mut stdout, &mut stderr, &opts()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DivisionByZero);
    assert_eq!(stdout, b"ok");
    assert!(stderr.is_empty());
}

#[test]
fn run_with_io_returns_the_status() {
    let src = "func @main() -> i32 {\nbb0:\n  ret -3\n}\n";
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = run_with_io(
        &parse(src),
        &mut &b""[..],
        &mut stdout,
        &mut stderr,
        &opts(),
    )
    .unwrap();
    assert_eq!(code, 253);
    assert_eq!(stderr, b"TOTAL: 0H-0M-0S-0us\n");
}
