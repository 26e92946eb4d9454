//! The lp64d calling convention (RISC-V ELF psABI, "Integer and hard-float calling
//! convention"), restricted to what SysY needs: scalars of at most 64 bits.
//!
//! Integer and pointer arguments take `a0..a7`; float arguments take `fa0..fa7`, then
//! any free `a` register (as raw bits), then the stack. Variadic arguments always use
//! integer registers or the stack, floats promoted to double. Stack arguments occupy
//! 8-byte slots from the caller's `sp` upwards. Results come back in `a0`/`fa0`.

use crate::mir::{Reg, RegClass};

/// Where one argument travels.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ArgLoc {
    /// In an integer register (an int, a pointer, or a float's bits when `fa` is full).
    IntReg(Reg),
    /// In a float register.
    FloatReg(Reg),
    /// In stack slot `k` (at `sp + 8k` of the caller).
    Stack(u32),
}

/// The type of an argument as the ABI sees it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ArgKind {
    /// A 32- or 64-bit integer or pointer.
    Int,
    /// A single float passed as a named (fixed) argument.
    Float,
    /// A float passed through `...`: promoted to double, integer registers only.
    VariadicDouble,
}

/// Argument registers `a0..a7`.
pub fn int_arg_reg(i: usize) -> Reg {
    Reg::x(10 + i as u32)
}

/// Argument registers `fa0..fa7`.
pub fn float_arg_reg(i: usize) -> Reg {
    Reg::f(10 + i as u32)
}

/// Assigns a location to each argument, in order. Returns the locations and the
/// number of stack slots used.
pub fn classify_args(kinds: &[ArgKind]) -> (Vec<ArgLoc>, u32) {
    let mut next_int = 0usize;
    let mut next_float = 0usize;
    let mut next_stack = 0u32;
    let mut locs = Vec::with_capacity(kinds.len());
    for &k in kinds {
        let loc = match k {
            ArgKind::Float if next_float < 8 => {
                next_float += 1;
                ArgLoc::FloatReg(float_arg_reg(next_float - 1))
            }
            _ if next_int < 8 => {
                next_int += 1;
                ArgLoc::IntReg(int_arg_reg(next_int - 1))
            }
            _ => {
                next_stack += 1;
                ArgLoc::Stack(next_stack - 1)
            }
        };
        locs.push(loc);
    }
    (locs, next_stack)
}

/// Registers the allocator may use, in preference order: caller-saved first (free to
/// use in any function), then callee-saved (saved once in the prologue), then `ra`
/// (clobbered by calls like a caller-saved register, and saved by the frame like a
/// callee-saved one: free in a function that calls, whose frame saves it anyway,
/// one save in a leaf; GCC allocates it too). The allocator takes the saved ones
/// the frame saves already first (`regalloc::linear_scan`). The scratch registers
/// `t5`, `t6`, `ft10`, `ft11` are reserved for spill code.
pub fn allocatable(class: RegClass) -> &'static [Reg] {
    match class {
        RegClass::Int => &INT,
        RegClass::Float => &FLOAT,
    }
}

/// The allocatable integer registers in preference order ([`allocatable`]).
const INT: [Reg; 26] = [
    // t0-t4
    Reg::x(5),
    Reg::x(6),
    Reg::x(7),
    Reg::x(28),
    Reg::x(29),
    // a7..a0: argument registers last among caller-saved, a0 last of all
    Reg::x(17),
    Reg::x(16),
    Reg::x(15),
    Reg::x(14),
    Reg::x(13),
    Reg::x(12),
    Reg::x(11),
    Reg::x(10),
    // s0-s11
    Reg::x(8),
    Reg::x(9),
    Reg::x(18),
    Reg::x(19),
    Reg::x(20),
    Reg::x(21),
    Reg::x(22),
    Reg::x(23),
    Reg::x(24),
    Reg::x(25),
    Reg::x(26),
    Reg::x(27),
    // ra: last, as in a leaf it costs a save like a callee-saved register.
    Reg::x(1),
];

/// The allocatable float registers in preference order ([`allocatable`]).
const FLOAT: [Reg; 30] = [
    // ft0-ft9
    Reg::f(0),
    Reg::f(1),
    Reg::f(2),
    Reg::f(3),
    Reg::f(4),
    Reg::f(5),
    Reg::f(6),
    Reg::f(7),
    Reg::f(28),
    Reg::f(29),
    // fa7..fa0
    Reg::f(17),
    Reg::f(16),
    Reg::f(15),
    Reg::f(14),
    Reg::f(13),
    Reg::f(12),
    Reg::f(11),
    Reg::f(10),
    // fs0-fs11
    Reg::f(8),
    Reg::f(9),
    Reg::f(18),
    Reg::f(19),
    Reg::f(20),
    Reg::f(21),
    Reg::f(22),
    Reg::f(23),
    Reg::f(24),
    Reg::f(25),
    Reg::f(26),
    Reg::f(27),
];

/// The registers of `regs` as a set of bits, bit `n` for register number `n`.
const fn mask_of(regs: &[Reg]) -> u64 {
    let mut mask = 0;
    let mut k = 0;
    while k < regs.len() {
        mask |= 1 << regs[k].0;
        k += 1;
    }
    mask
}

/// [`INT`] and [`FLOAT`] as one set of bits (physical registers number below 64),
/// so that asking whether a register is allocatable takes constant time (it is
/// asked for every call clobber of every call, by liveness and scheduling).
const ALLOCATABLE: u64 = mask_of(&INT) | mask_of(&FLOAT);

/// Whether the callee must preserve `r` (s0-s11, fs0-fs11).
pub fn is_callee_saved(r: Reg) -> bool {
    matches!(r.0, 8 | 9 | 18..=27) || matches!(r.0.wrapping_sub(32), 8 | 9 | 18..=27)
}

/// Whether the caller reads `r` when the function returns: the callee-saved
/// registers (restored by the epilogue) and `ra` (read by `ret` itself, and by
/// the callee of a tail call when it returns). The allocator may use `ra`, as it
/// uses a callee-saved register: the frame saves it, the epilogue restores it.
pub fn is_read_by_return(r: Reg) -> bool {
    r == crate::mir::RA || is_callee_saved(r)
}

/// Whether the register allocator tracks `r` (allocatable physical registers).
pub fn is_allocatable(r: Reg) -> bool {
    r.is_virtual() || ALLOCATABLE & (1 << r.0) != 0
}

/// Whether `r` is one of [`allocatable`]`(class)`.
pub fn is_allocatable_in(class: RegClass, r: Reg) -> bool {
    r.is_phys() && r.phys_class() == class && ALLOCATABLE & (1 << r.0) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::NUM_PREGS;

    #[test]
    fn the_allocatable_set_is_the_two_preference_lists() {
        // Every register number, physical of both files and a few virtual ones,
        // against a search of the lists.
        for n in 0..NUM_PREGS + 4 {
            let r = Reg(n);
            let listed = |c| allocatable(c).contains(&r);
            let in_a_list = listed(RegClass::Int) || listed(RegClass::Float);
            assert_eq!(is_allocatable(r), r.is_virtual() || in_a_list, "{n}");
            for c in [RegClass::Int, RegClass::Float] {
                assert_eq!(is_allocatable_in(c, r), listed(c), "{n}");
            }
        }
        // The reserved scratch registers and the fixed ones are not allocatable.
        for r in [
            Reg::x(0),
            Reg::x(2),
            Reg::x(30),
            Reg::x(31),
            Reg::f(30),
            Reg::f(31),
        ] {
            assert!(!is_allocatable(r));
        }
        assert!(is_allocatable(Reg::x(10)) && is_allocatable(Reg::f(27)));
    }

    #[test]
    fn floats_overflow_into_int_registers_then_stack() {
        let mut kinds = vec![ArgKind::Float; 10];
        kinds.push(ArgKind::Int);
        let (locs, stack) = classify_args(&kinds);
        assert_eq!(locs[7], ArgLoc::FloatReg(Reg::f(17)));
        assert_eq!(locs[8], ArgLoc::IntReg(Reg::x(10)));
        assert_eq!(locs[9], ArgLoc::IntReg(Reg::x(11)));
        assert_eq!(locs[10], ArgLoc::IntReg(Reg::x(12)));
        assert_eq!(stack, 0);
    }

    #[test]
    fn ints_beyond_eight_go_to_stack() {
        let kinds = vec![ArgKind::Int; 11];
        let (locs, stack) = classify_args(&kinds);
        assert_eq!(locs[8], ArgLoc::Stack(0));
        assert_eq!(locs[10], ArgLoc::Stack(2));
        assert_eq!(stack, 3);
    }

    #[test]
    fn variadic_doubles_use_int_registers() {
        let kinds = [ArgKind::Int, ArgKind::VariadicDouble, ArgKind::Float];
        let (locs, _) = classify_args(&kinds);
        assert_eq!(locs[1], ArgLoc::IntReg(Reg::x(11)));
        assert_eq!(locs[2], ArgLoc::FloatReg(Reg::f(10)));
    }

    #[test]
    fn callee_saved_sets() {
        assert!(is_callee_saved(Reg::x(8)));
        assert!(is_callee_saved(Reg::x(27)));
        assert!(!is_callee_saved(Reg::x(10)));
        assert!(is_callee_saved(Reg::f(8)));
        assert!(!is_callee_saved(Reg::f(10)));
        assert!(!is_allocatable(Reg::x(30)));
        assert!(is_allocatable(Reg::x(5)));
    }
}
