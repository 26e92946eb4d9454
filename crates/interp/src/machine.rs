//! The interpreter loop: runs decoded functions (see `decode`) with an explicit call
//! stack, so deep recursion in the program never recurses in the host. Each call
//! pushes a [`Frame`] record, claims a window of `nslots` registers on one growing
//! register stack (constants copied in, arguments moved to the parameter slots) and
//! bumps the memory stack by the callee's `alloc` bytes; `ret` undoes all three.
//!
//! Values in registers are `u64`: `i32` and `f32` as their 32 bits (upper bits
//! ignored by every reader), `i64` as all 64, pointers as 64-bit addresses. Semantics
//! follow RV64: wrapping `i32` and `i64` arithmetic, `MIN / -1 == MIN` and
//! `MIN % -1 == 0` at either width, shift
//! amounts mod 32, `f32` arithmetic in single precision with NaN results canonicalised
//! (`0x7fc00000`, as RISC-V produces), `fptosi` saturating with NaN to `i32::MAX`
//! (`fcvt.w.s` with `rtz`). Division by zero traps (undefined in SysY).
//!
//! The stack limit counts each call's `alloc` bytes plus [`FRAME_OVERHEAD`] (return
//! address, frame pointer, a few saved registers, as a compiled frame would need); the
//! host register stack is capped separately at four times the limit.

use crate::decode::{DecodedFunc, DecodedModule, Op, Slot};
use crate::error::{ErrorKind, InterpError};
use crate::memory::Memory;
use crate::runtime::Runtime;
use ir::CmpOp;

/// Bytes charged to the stack limit per active call, besides its `alloc`s.
pub const FRAME_OVERHEAD: u64 = 48;

/// The host register stack (8 bytes per slot of every active frame) may use this
/// many times the stack limit: frames of big functions hold many SSA values that a
/// compiled program would keep in registers or reuse stack slots for.
const REGS_PER_STACK_BYTE: u64 = 4;

/// A suspended caller.
struct Frame {
    func: u32,
    ret_pc: u32,
    base: usize,
    fp: u64,
    ret_dst: Slot,
}

/// Limits of one run.
pub(crate) struct Limits {
    pub max_steps: u64,
    pub stack_bytes: u64,
}

/// The canonical quiet NaN RISC-V arithmetic produces.
const CANONICAL_NAN: u64 = 0x7fc0_0000;

#[inline(always)]
fn f(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

#[inline(always)]
fn fbits(x: f32) -> u64 {
    if x.is_nan() {
        CANONICAL_NAN
    } else {
        x.to_bits() as u64
    }
}

/// `fcvt.w.s` with round-toward-zero: saturating, NaN to `i32::MAX`.
#[inline(always)]
pub(crate) fn fptosi(x: f32) -> i32 {
    if x.is_nan() {
        i32::MAX
    } else {
        x as i32
    }
}

/// Runs `main` to completion. Returns main's return register and the number of
/// instructions executed.
pub(crate) fn execute(
    module: &DecodedModule,
    mem: &mut Memory,
    rt: &mut Runtime<'_>,
    limits: &Limits,
) -> (Result<u64, InterpError>, u64) {
    let mut steps: u64 = 0;
    let r = run_loop(module, mem, rt, limits, &mut steps);
    (r, steps)
}

fn run_loop(
    module: &DecodedModule,
    mem: &mut Memory,
    rt: &mut Runtime<'_>,
    limits: &Limits,
    steps_out: &mut u64,
) -> Result<u64, InterpError> {
    let max_steps = limits.max_steps;
    let regs_limit =
        (limits.stack_bytes.saturating_mul(REGS_PER_STACK_BYTE) / 8).max(1 << 16) as usize;
    let mut func: &DecodedFunc = &module.funcs[module.main as usize];
    let mut fidx = module.main;
    let mut regs: Vec<u64> = vec![0; (func.nslots as usize).max(1 << 12)];
    regs[..func.consts.len()].copy_from_slice(&func.consts);
    let mut frames: Vec<Frame> = Vec::new();
    let mut argbuf: Vec<u64> = Vec::new();
    let mut base: usize = 0;
    let mut pc: usize = 0;
    let mut steps: u64 = 0;
    let mut stack_used = func.frame_bytes.saturating_add(FRAME_OVERHEAD);
    let overflow = ErrorKind::StackOverflow {
        limit: limits.stack_bytes,
    };
    let mut fp = mem.sp;
    if stack_used > limits.stack_bytes || mem.set_sp(fp.saturating_add(func.frame_bytes)).is_err() {
        return Err(InterpError::in_func(overflow, &func.name));
    }
    let mut code: &[Op] = &func.code;

    macro_rules! bail {
        ($kind:expr) => {{
            *steps_out = steps;
            // `pc` has moved past the failing op.
            let pos = pc.checked_sub(1).and_then(|k| func.pos(k));
            return Err(InterpError::in_func($kind, &func.name).at(pos));
        }};
    }
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(k) => bail!(k),
            }
        };
    }
    macro_rules! r {
        ($s:expr) => {
            regs[base + $s as usize]
        };
    }
    macro_rules! check_steps {
        () => {
            if steps > max_steps {
                bail!(ErrorKind::StepLimit { limit: max_steps });
            }
        };
    }
    macro_rules! int_bin {
        ($d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {{
            let $x = r!($a) as u32;
            let $y = r!($b) as u32;
            r!($d) = ($e) as u64;
        }};
    }
    macro_rules! int_cmp {
        ($d:expr, $a:expr, $b:expr, $op:tt) => {{
            r!($d) = ((r!($a) as i32) $op (r!($b) as i32)) as u64;
        }};
    }
    macro_rules! float_bin {
        ($d:expr, $a:expr, $b:expr, $op:tt) => {{
            r!($d) = fbits(f(r!($a)) $op f(r!($b)));
        }};
    }
    macro_rules! float_cmp {
        ($d:expr, $a:expr, $b:expr, $op:tt) => {{
            r!($d) = (f(r!($a)) $op f(r!($b))) as u64;
        }};
    }

    macro_rules! take_edge {
        ($edge:expr) => {{
            let e = func.edges[$edge as usize];
            for &(dst, src) in &func.moves[e.moves_start as usize..e.moves_end as usize] {
                r!(dst) = r!(src);
            }
            pc = e.target as usize;
        }};
    }
    macro_rules! fused_br {
        ($a:expr, $b:expr, $t:expr, $f:expr, $op:tt) => {{
            steps += 1;
            check_steps!();
            let edge = if (r!($a) as i32) $op (r!($b) as i32) { $t } else { $f };
            take_edge!(edge);
        }};
    }

    loop {
        let Some(&op) = code.get(pc) else {
            bail!(ErrorKind::InvalidIr(
                "execution ran past the end of the function".into()
            ));
        };
        pc += 1;
        steps += 1;
        match op {
            Op::Add { d, a, b } => int_bin!(d, a, b, |x, y| x.wrapping_add(y)),
            Op::Sub { d, a, b } => int_bin!(d, a, b, |x, y| x.wrapping_sub(y)),
            Op::Mul { d, a, b } => int_bin!(d, a, b, |x, y| x.wrapping_mul(y)),
            Op::SDiv { d, a, b } => {
                let (x, y) = (r!(a) as i32, r!(b) as i32);
                if y == 0 {
                    bail!(ErrorKind::DivisionByZero);
                }
                r!(d) = x.wrapping_div(y) as u32 as u64;
            }
            Op::SRem { d, a, b } => {
                let (x, y) = (r!(a) as i32, r!(b) as i32);
                if y == 0 {
                    bail!(ErrorKind::DivisionByZero);
                }
                r!(d) = x.wrapping_rem(y) as u32 as u64;
            }
            Op::And { d, a, b } => int_bin!(d, a, b, |x, y| x & y),
            Op::Or { d, a, b } => int_bin!(d, a, b, |x, y| x | y),
            Op::Xor { d, a, b } => int_bin!(d, a, b, |x, y| x ^ y),
            Op::Shl { d, a, b } => int_bin!(d, a, b, |x, y| x.wrapping_shl(y)),
            Op::LShr { d, a, b } => int_bin!(d, a, b, |x, y| x.wrapping_shr(y)),
            Op::AShr { d, a, b } => int_bin!(d, a, b, |x, y| (x as i32).wrapping_shr(y) as u32),
            Op::FAdd { d, a, b } => float_bin!(d, a, b, +),
            Op::FSub { d, a, b } => float_bin!(d, a, b, -),
            Op::FMul { d, a, b } => float_bin!(d, a, b, *),
            Op::FDiv { d, a, b } => float_bin!(d, a, b, /),
            Op::Eq { d, a, b } => int_cmp!(d, a, b, ==),
            Op::Ne { d, a, b } => int_cmp!(d, a, b, !=),
            Op::Slt { d, a, b } => int_cmp!(d, a, b, <),
            Op::Sle { d, a, b } => int_cmp!(d, a, b, <=),
            Op::Sgt { d, a, b } => int_cmp!(d, a, b, >),
            Op::Sge { d, a, b } => int_cmp!(d, a, b, >=),
            Op::PtrCmp { op, d, a, b } => {
                let (x, y) = (r!(a) as i64, r!(b) as i64);
                r!(d) = match op {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Slt => x < y,
                    CmpOp::Sle => x <= y,
                    CmpOp::Sgt => x > y,
                    _ => x >= y,
                } as u64;
            }
            Op::FEq { d, a, b } => float_cmp!(d, a, b, ==),
            Op::FNe { d, a, b } => float_cmp!(d, a, b, !=),
            Op::FLt { d, a, b } => float_cmp!(d, a, b, <),
            Op::FLe { d, a, b } => float_cmp!(d, a, b, <=),
            Op::FGt { d, a, b } => float_cmp!(d, a, b, >),
            Op::FGe { d, a, b } => float_cmp!(d, a, b, >=),
            Op::Add64 { d, a, b } => r!(d) = r!(a).wrapping_add(r!(b)),
            Op::Sub64 { d, a, b } => r!(d) = r!(a).wrapping_sub(r!(b)),
            Op::Mul64 { d, a, b } => r!(d) = r!(a).wrapping_mul(r!(b)),
            Op::SDiv64 { d, a, b } => {
                let (x, y) = (r!(a) as i64, r!(b) as i64);
                if y == 0 {
                    bail!(ErrorKind::DivisionByZero);
                }
                r!(d) = x.wrapping_div(y) as u64;
            }
            Op::SRem64 { d, a, b } => {
                let (x, y) = (r!(a) as i64, r!(b) as i64);
                if y == 0 {
                    bail!(ErrorKind::DivisionByZero);
                }
                r!(d) = x.wrapping_rem(y) as u64;
            }
            Op::FNeg { d, a } => r!(d) = (r!(a) as u32 ^ 0x8000_0000) as u64,
            Op::FAbs { d, a } => r!(d) = (r!(a) as u32 & 0x7fff_ffff) as u64,
            Op::SIToFP { d, a } => r!(d) = ((r!(a) as i32) as f32).to_bits() as u64,
            Op::FPToSI { d, a } => r!(d) = fptosi(f(r!(a))) as u32 as u64,
            Op::SExt { d, a } => r!(d) = r!(a) as i32 as i64 as u64,
            Op::Trunc { d, a } | Op::FBits { d, a } => r!(d) = r!(a) as u32 as u64,
            Op::Alloc { d, idx } => r!(d) = fp + func.allocs[idx as usize],
            Op::Load8 { d, p } => r!(d) = tri!(mem.load8(r!(p))) as u64,
            Op::Load32 { d, p } => r!(d) = tri!(mem.load32(r!(p))) as u64,
            Op::Load64 { d, p } => r!(d) = tri!(mem.load64(r!(p))),
            Op::Store8 { v, p } => tri!(mem.store8(r!(p), r!(v) as u8)),
            Op::Store32 { v, p } => tri!(mem.store32(r!(p), r!(v) as u32)),
            Op::Store64 { v, p } => tri!(mem.store64(r!(p), r!(v))),
            Op::Gep {
                d,
                base: b,
                index,
                stride,
            } => {
                let off = (r!(index) as i32 as i64 as u64).wrapping_mul(stride as u64);
                r!(d) = r!(b).wrapping_add(off);
            }
            Op::LoadIdx32 {
                d,
                base: b,
                index,
                stride,
            } => {
                steps += 1;
                let off = (r!(index) as i32 as i64 as u64).wrapping_mul(stride as u64);
                r!(d) = tri!(mem.load32(r!(b).wrapping_add(off))) as u64;
            }
            Op::StoreIdx32 {
                v,
                base: b,
                index,
                stride,
            } => {
                steps += 1;
                let off = (r!(index) as i32 as i64 as u64).wrapping_mul(stride as u64);
                tri!(mem.store32(r!(b).wrapping_add(off), r!(v) as u32));
            }
            Op::BrEq { a, b, t, f } => fused_br!(a, b, t, f, ==),
            Op::BrNe { a, b, t, f } => fused_br!(a, b, t, f, !=),
            Op::BrSlt { a, b, t, f } => fused_br!(a, b, t, f, <),
            Op::BrSle { a, b, t, f } => fused_br!(a, b, t, f, <=),
            Op::BrSgt { a, b, t, f } => fused_br!(a, b, t, f, >),
            Op::BrSge { a, b, t, f } => fused_br!(a, b, t, f, >=),
            Op::Goto { target } => {
                check_steps!();
                pc = target as usize;
            }
            Op::Jump { edge } => {
                check_steps!();
                take_edge!(edge);
            }
            Op::BrGoto { cond, t, f } => {
                check_steps!();
                pc = if r!(cond) as u32 != 0 { t } else { f } as usize;
            }
            Op::Br { cond, t, f } => {
                check_steps!();
                let edge = if r!(cond) as u32 != 0 { t } else { f };
                take_edge!(edge);
            }
            Op::Ret { v } => {
                check_steps!();
                let val = r!(v);
                stack_used =
                    stack_used.saturating_sub(func.frame_bytes.saturating_add(FRAME_OVERHEAD));
                // Shrinking never fails.
                let _ = mem.set_sp(fp);
                match frames.pop() {
                    None => {
                        *steps_out = steps;
                        return Ok(val);
                    }
                    Some(fr) => {
                        fidx = fr.func;
                        func = &module.funcs[fidx as usize];
                        code = &func.code;
                        pc = fr.ret_pc as usize;
                        base = fr.base;
                        fp = fr.fp;
                        r!(fr.ret_dst) = val;
                    }
                }
            }
            Op::Call {
                d,
                func: callee,
                args,
            } => {
                check_steps!();
                let g = &module.funcs[callee as usize];
                let new_base = base + func.nslots as usize;
                let need = new_base + g.nslots as usize;
                if need > regs.len() {
                    if need > regs_limit {
                        bail!(overflow);
                    }
                    let len = need.max(regs.len() * 2).min(regs_limit);
                    regs.resize(len, 0);
                }
                stack_used =
                    stack_used.saturating_add(g.frame_bytes.saturating_add(FRAME_OVERHEAD));
                let new_fp = mem.sp;
                if stack_used > limits.stack_bytes
                    || mem.set_sp(new_fp.saturating_add(g.frame_bytes)).is_err()
                {
                    bail!(overflow);
                }
                let k = g.consts.len();
                regs[new_base..new_base + k].copy_from_slice(&g.consts);
                let arg_slots = &func.call_args[args as usize..args as usize + g.nparams as usize];
                for (i, &s) in arg_slots.iter().enumerate() {
                    regs[new_base + k + i] = r!(s);
                }
                frames.push(Frame {
                    func: fidx,
                    ret_pc: pc as u32,
                    base,
                    fp,
                    ret_dst: d,
                });
                fidx = callee;
                func = g;
                code = &g.code;
                pc = 0;
                base = new_base;
                fp = new_fp;
            }
            Op::CallBuiltin { d, idx } => {
                let call = &func.builtin_calls[idx as usize];
                argbuf.clear();
                argbuf.extend(call.args.iter().map(|&s| r!(s)));
                r!(d) = tri!(rt.call(call.builtin, &argbuf, &call.types, mem));
            }
            Op::Trap { idx } => bail!(func.traps[idx as usize].clone()),
        }
    }
}
