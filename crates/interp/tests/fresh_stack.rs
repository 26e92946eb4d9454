//! `RunOptions::fresh_stack_byte`: what a read of never-written stack memory sees.

use interp::{run_module, RunOptions};

/// `f` reads an element of a local array nothing wrote; main prints it.
const UNINIT_READ: &str = "\
func @f() -> i32 {
bb0:
  %0 = alloc [i32; 4]
  %1 = gep %0, 2, 4
  %2 = load i32, %1
  ret %2
}

func @main() -> i32 {
bb0:
  %0 = call @f()
  call @putint(%0)
  ret 0
}

declare @putint(i32) -> void
";

fn run(fresh_stack_byte: u8) -> String {
    let m = ir::parse_module(UNINIT_READ).unwrap();
    let opts = RunOptions {
        wall_clock_timers: false,
        fresh_stack_byte,
        ..Default::default()
    };
    String::from_utf8(run_module(&m, b"", &opts).unwrap().stdout).unwrap()
}

#[test]
fn fresh_stack_reads_as_the_chosen_byte() {
    assert_eq!(run(0), "0");
    assert_eq!(run(0xa5), (0xa5a5a5a5u32 as i32).to_string());
    assert_eq!(run(0x01), 0x01010101.to_string());
}
