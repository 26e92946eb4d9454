//! Interpreter throughput: runs a loop-heavy program (200x200 integer matrix
//! multiply over globals, SSA form with block arguments), a float loop and a
//! call-heavy one (recursive fib) and prints IR instructions per second.
//! `cargo run --release -p interp --example bench`

use std::time::Instant;

const MATMUL: &str = "
global @a: [i32; 40000] = zeroinit
global @b: [i32; 40000] = zeroinit
global @c: [i32; 40000] = zeroinit
declare @putint(i32) -> void

func @main() -> i32 {
entry:
  jump init(0)
init(%i: i32):
  %ic = slt %i, 40000
  br %ic, init_body, mm_i(0)
init_body:
  %pa = gep @a, %i, 4
  %va = srem %i, 7
  store %va, %pa
  %pb = gep @b, %i, 4
  %vb = srem %i, 11
  store %vb, %pb
  %i1 = add %i, 1
  jump init(%i1)
mm_i(%r: i32):
  %rc = slt %r, 200
  br %rc, mm_j(%r, 0), done
mm_j(%r2: i32, %col: i32):
  %cc = slt %col, 200
  %r1 = add %r2, 1
  br %cc, mm_k(%r2, %col, 0, 0), mm_i(%r1)
mm_k(%r3: i32, %c3: i32, %k: i32, %acc: i32):
  %kc = slt %k, 200
  br %kc, k_body, k_done
k_body:
  %ra = mul %r3, 200
  %ia = add %ra, %k
  %pa2 = gep @a, %ia, 4
  %x = load i32, %pa2
  %kb = mul %k, 200
  %ib = add %kb, %c3
  %pb2 = gep @b, %ib, 4
  %y = load i32, %pb2
  %xy = mul %x, %y
  %acc2 = add %acc, %xy
  %k2 = add %k, 1
  jump mm_k(%r3, %c3, %k2, %acc2)
k_done:
  %rc3 = mul %r3, 200
  %ic3 = add %rc3, %c3
  %pc = gep @c, %ic3, 4
  store %acc, %pc
  %c4 = add %c3, 1
  jump mm_j(%r3, %c4)
done:
  %last = gep @c, 39999, 4
  %v = load i32, %last
  call @putint(%v)
  ret 0
}
";

const FLOATS: &str = "
declare @putfloat(f32) -> void
func @main() -> i32 {
entry:
  jump head(0, 0.0, 1.0)
head(%i: i32, %s: f32, %x: f32):
  %c = slt %i, 5000000
  br %c, body, exit
body:
  %y = fmul %x, 0.999999
  %z = fadd %s, %y
  %w = fdiv %z, 1.0000001
  %i2 = add %i, 1
  jump head(%i2, %w, %y)
exit:
  call @putfloat(%s)
  ret 0
}
";

const FIB: &str = "
declare @putint(i32) -> void
func @fib(i32) -> i32 {
bb0(%n: i32):
  %small = slt %n, 2
  br %small, base, rec
base:
  ret %n
rec:
  %n1 = sub %n, 1
  %a = call @fib(%n1)
  %n2 = sub %n, 2
  %b = call @fib(%n2)
  %r = add %a, %b
  ret %r
}
func @main() -> i32 {
bb0:
  %f = call @fib(30)
  call @putint(%f)
  ret 0
}
";

/// CPU time of this thread in seconds (Linux `/proc/thread-self/schedstat`), which
/// unlike wall time does not count waiting for a busy machine's cores.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn bench(name: &str, src: &str) {
    let m = ir::parse_module(src).expect("benchmark IR parses");
    let opts = interp::RunOptions::default();
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    let out = interp::run_module(&m, b"", &opts).expect("benchmark runs");
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) => format!(
            ", {:.3} s CPU = {:>6.1} M/s",
            b - a,
            out.steps as f64 / (b - a) / 1e6
        ),
        _ => String::new(),
    };
    println!(
        "{name:8} {:>11} instructions: {wall:.3} s wall = {:>6.1} M/s{cpu} (output {})",
        out.steps,
        out.steps as f64 / wall / 1e6,
        String::from_utf8_lossy(&out.stdout)
    );
}

fn main() {
    bench("matmul", MATMUL);
    bench("floats", FLOATS);
    bench("fib", FIB);
}
