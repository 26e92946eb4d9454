//! An estimate of the cycles an in-order, dual-issue core (the SiFive U74 the
//! contest runs on) takes for a straight-line sequence of IR instructions, found by
//! list scheduling them (Gibbons and Muchnick, "Efficient Instruction Scheduling for
//! a Pipelined Architecture", SIGPLAN 1986: ready instructions in order of the
//! longest latency path to the end).
//!
//! A transformation that reshapes a loop body (software pipelining) compares the
//! estimate before and after: a critical path alone misses what stalls an
//! in-order core, two issue slots a cycle of which only one takes a memory access
//! and only one a multiply, division, floating-point operation or branch, so that a
//! body of loads feeding multiplies waits on its loads even when its critical path
//! is short.
//!
//! The model, close to the bench's U74 estimate: two instructions issue per cycle;
//! loads and stores use pipe A, multiplies, divisions and floating-point operations
//! pipe B, anything else either; an instruction issues when its operands are ready
//! (result latencies: ALU 1, load 3, multiply 3, floating-point add and multiply 5,
//! compare and convert 3, division 20 and float division 27, each divider taking
//! no other division until done; a division by a constant 4 as ALU work for a
//! power of two, 7 as a multiply otherwise). A `gep` with a constant index is folded into the access that
//! uses it and costs nothing when its offset fits an access's 12-bit immediate;
//! one with a variable index, or a larger offset, is an ALU operation.
//! Memory accesses keep their order where one of them is a store, unless the caller
//! puts them in different groups (accesses it has proven independent).

use ir::{BinOp, Function, Inst, InstKind, UnOp, Value};
use rustc_hash::FxHashMap;

/// How an instruction occupies the core.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    /// No instruction at all (folded into its users).
    Free,
    /// Pipe A or B.
    Alu,
    /// Pipe A.
    Memory,
    /// Pipe B, pipelined.
    Long,
    /// Pipe B, into a divider (0: integer, 1: float) that takes no other
    /// division until done.
    Divider(usize),
}

fn unit_and_latency(f: &Function, i: Inst) -> (Unit, u32) {
    match f.kind(i) {
        InstKind::Gep { index, stride, .. } => match f.as_iconst(*index) {
            Some(c) if (i64::from(c) * i64::from(*stride)).unsigned_abs() < 2048 => (Unit::Free, 0),
            _ => (Unit::Alu, 1),
        },
        InstKind::Load { .. } => (Unit::Memory, 3),
        InstKind::Store { .. } => (Unit::Memory, 1),
        InstKind::Binary { op, args } => match op {
            BinOp::Mul | BinOp::Mul64 => (Unit::Long, 3),
            // By a constant, the back end divides without the divider: by a power
            // of two with four shifts and adds, by another constant with a
            // multiply by its inverse and a few fix-ups.
            BinOp::SDiv | BinOp::SRem => match f.as_iconst(args[1]) {
                Some(d) if d.unsigned_abs().is_power_of_two() => (Unit::Alu, 4),
                Some(_) => (Unit::Long, 7),
                None => (Unit::Divider(0), 20),
            },
            BinOp::SDiv64 | BinOp::SRem64 => (Unit::Divider(0), 20),
            BinOp::FAdd | BinOp::FSub | BinOp::FMul => (Unit::Long, 5),
            BinOp::FDiv => (Unit::Divider(1), 27),
            _ => (Unit::Alu, 1),
        },
        InstKind::Cmp { op, .. } if op.is_float() => (Unit::Long, 3),
        InstKind::Unary { op, .. } => match op {
            UnOp::SExt | UnOp::Trunc => (Unit::Alu, 1),
            UnOp::FNeg | UnOp::FAbs | UnOp::SIToFP | UnOp::FPToSI | UnOp::FBits => (Unit::Long, 3),
        },
        _ => (Unit::Alu, 1),
    }
}

/// Estimated cycles from the first issue until every instruction of `insts` has
/// issued and every value of `outputs` is ready. Operands defined outside
/// `insts`, or later in it (a loop kernel reading the previous trip's values),
/// are ready at the start. `group(i)` partitions the memory accesses:
/// accesses of different groups never wait for each other.
pub fn schedule_length(
    f: &Function,
    insts: &[Inst],
    outputs: &[Value],
    group: &dyn Fn(Inst) -> u32,
) -> u32 {
    let dag = Dag::new(f, insts, outputs, &|_| None, group);
    dag.schedule(&vec![0; insts.len()], [0; 2]).end
}

/// How many trips of a loop run through [`STEADY_TRIPS`] before the estimate of
/// [`steady_state_length`] is read.
pub const STEADY_TRIPS: usize = 4;

/// Estimated cycles of one trip of a loop whose body is `insts` (in this order)
/// in its steady state, the loop's branch included: each trip starts when the
/// previous one has issued its last instruction and its branch, with the results
/// the previous trip left in flight still on their way. An operand is the
/// previous trip's value when it is defined later in `insts` (a loop kernel
/// reading what the last trip's early stage computed) or when `previous` maps it
/// (a loop header's parameter) to a value that `insts` defines; any other operand
/// is ready at the start. Unlike [`schedule_length`] the trip does not wait for
/// those values: the next trip does, as far as it needs them (and for a divider
/// still busy with the previous trip's division). The estimate is
/// the mean of the last two of [`STEADY_TRIPS`] trips, rounded up (an in-order
/// core may alternate between two trip lengths).
pub fn steady_state_length(
    f: &Function,
    insts: &[Inst],
    previous: &dyn Fn(Value) -> Option<Value>,
    group: &dyn Fn(Inst) -> u32,
) -> u32 {
    let dag = Dag::new(f, insts, &[], previous, group);
    let mut entry = vec![0u32; insts.len()];
    let mut dividers = [0u32; 2];
    let mut lengths = Vec::with_capacity(STEADY_TRIPS);
    for _ in 0..STEADY_TRIPS {
        let trip = dag.schedule(&entry, dividers);
        let length = trip.issue_end + 1;
        for (k, ready) in entry.iter_mut().enumerate() {
            *ready = (trip.issued[k] + dag.info[k].1).saturating_sub(length);
        }
        dividers = trip.divider_free_at.map(|at| at.saturating_sub(length));
        lengths.push(length);
    }
    let last_two = &lengths[STEADY_TRIPS - 2..];
    (last_two[0] + last_two[1]).div_ceil(2)
}

/// The longest latency, in cycles, from a value the previous trip of a loop left
/// to the same value for the next trip, through the body `insts` (in order): for
/// each operand that `previous` maps (a header parameter, to the value the back
/// edge passes for it), the latency path from the parameter to that value. A trip
/// cannot take fewer cycles than this however the loop is unrolled or scheduled
/// (the recurrence bound of modulo scheduling, for cycles through one parameter).
pub fn recurrence_length(
    f: &Function,
    insts: &[Inst],
    previous: &dyn Fn(Value) -> Option<Value>,
) -> u32 {
    let index: FxHashMap<Inst, usize> = insts.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    // For each parameter read in the body: the longest path from it to each
    // instruction's result (None: not reached), in one forward sweep per parameter.
    let mut params: Vec<Value> = Vec::new();
    for &i in insts {
        f.kind(i).for_each_arg(|a| {
            if previous(a).is_some() && !params.contains(&a) {
                params.push(a);
            }
        });
    }
    let mut longest = 0;
    for p in params {
        let Some(next) = previous(p) else {
            continue;
        };
        let mut reach: Vec<Option<u32>> = vec![None; insts.len()];
        for (k, &i) in insts.iter().enumerate() {
            let mut from: Option<u32> = None;
            f.kind(i).for_each_arg(|a| {
                let at = if a == p {
                    Some(0)
                } else {
                    f.def_inst(a)
                        .and_then(|d| index.get(&d))
                        .filter(|&&d| d < k)
                        .and_then(|&d| reach[d])
                };
                from = from.max(at);
            });
            reach[k] = from.map(|c| c + unit_and_latency(f, i).1);
        }
        let end = f
            .def_inst(next)
            .and_then(|d| index.get(&d))
            .and_then(|&d| reach[d])
            .unwrap_or(0);
        longest = longest.max(end);
    }
    longest
}

/// The dependences among a list of instructions and what each occupies.
struct Dag {
    /// Unit and result latency of each instruction.
    info: Vec<(Unit, u32)>,
    /// Predecessors of each instruction in the same trip: (instruction, whether it
    /// waits for the result; otherwise only for the issue, as memory order does).
    preds: Vec<Vec<(usize, bool)>>,
    /// The instructions whose previous-trip results each instruction reads.
    carried: Vec<Vec<usize>>,
    /// Whether the caller wants the instruction's result ready at the end.
    is_output: Vec<bool>,
    /// Priority: the longest latency path from the instruction to the end, where
    /// an output, or a value the next trip reads, counts its own latency.
    height: Vec<u32>,
}

/// One list-scheduled trip of a [`Dag`].
struct Trip {
    /// The cycle each instruction issued in.
    issued: Vec<u32>,
    /// The cycle after the last issue of an instruction that is not free.
    issue_end: u32,
    /// The later of `issue_end` and the cycle every output is ready.
    end: u32,
    /// The cycle each divider (integer, float) takes its next division.
    divider_free_at: [u32; 2],
}

impl Dag {
    fn new(
        f: &Function,
        insts: &[Inst],
        outputs: &[Value],
        previous: &dyn Fn(Value) -> Option<Value>,
        group: &dyn Fn(Inst) -> u32,
    ) -> Dag {
        let n = insts.len();
        let index: FxHashMap<Inst, usize> =
            insts.iter().enumerate().map(|(k, &i)| (i, k)).collect();
        let info: Vec<(Unit, u32)> = insts.iter().map(|&i| unit_and_latency(f, i)).collect();
        let defined_at = |v: Value| f.def_inst(v).and_then(|d| index.get(&d)).copied();
        let mut preds: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        let mut carried: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut read_next_trip = vec![false; n];
        let mut accesses: Vec<(usize, bool, u32)> = Vec::new();
        for (k, &i) in insts.iter().enumerate() {
            f.kind(i).for_each_arg(|a| match defined_at(a) {
                Some(d) if d < k => preds[k].push((d, true)),
                // A value defined later in the list is the previous trip's.
                Some(d) => {
                    carried[k].push(d);
                    read_next_trip[d] = true;
                }
                None => {
                    if let Some(d) = previous(a).and_then(defined_at) {
                        carried[k].push(d);
                        read_next_trip[d] = true;
                    }
                }
            });
            let store = match f.kind(i) {
                InstKind::Store { .. } => true,
                InstKind::Load { .. } => false,
                _ => continue,
            };
            let g = group(i);
            for &(j, other_store, h) in &accesses {
                if h == g && (store || other_store) {
                    preds[k].push((j, false));
                }
            }
            accesses.push((k, store, g));
        }
        let is_output: Vec<bool> = insts
            .iter()
            .map(|&i| f.inst_result(i).is_some_and(|r| outputs.contains(&r)))
            .collect();
        let mut height = vec![0u32; n];
        for k in (0..n).rev() {
            if is_output[k] || read_next_trip[k] {
                height[k] = height[k].max(info[k].1);
            }
            for &(p, data) in &preds[k] {
                let wait = if data { info[p].1 } else { 1 };
                height[p] = height[p].max(height[k] + wait);
            }
        }
        Dag {
            info,
            preds,
            carried,
            is_output,
            height,
        }
    }

    /// List-schedules one trip, the previous trip's result of instruction `d`
    /// being ready at cycle `entry[d]` and the dividers free at `dividers`.
    fn schedule(&self, entry: &[u32], dividers: [u32; 2]) -> Trip {
        let n = self.info.len();
        let info = &self.info;
        // Cycle at which each instruction issued (`None` before).
        let mut issued: Vec<Option<u32>> = vec![None; n];
        let mut remaining = n;
        let mut cycle = 0u32;
        let mut divider_free_at = dividers;
        let (mut issue_end, mut end) = (0u32, 0u32);
        while remaining > 0 {
            let (mut slots, mut memory, mut pipe_b) = (2, false, false);
            loop {
                let ready = |k: usize| {
                    self.carried[k].iter().all(|&d| entry[d] <= cycle)
                        && self.preds[k].iter().all(|&(p, data)| match issued[p] {
                            Some(at) if data => at + info[p].1 <= cycle,
                            Some(at) => at < cycle || info[p].0 == Unit::Free,
                            None => false,
                        })
                };
                let fits = |k: usize| match info[k].0 {
                    Unit::Free => true,
                    Unit::Alu => slots > 0,
                    Unit::Memory => slots > 0 && !memory,
                    Unit::Long => slots > 0 && !pipe_b,
                    Unit::Divider(d) => slots > 0 && !pipe_b && divider_free_at[d] <= cycle,
                };
                let best = (0..n)
                    .filter(|&k| issued[k].is_none() && fits(k) && ready(k))
                    .max_by_key(|&k| (self.height[k], std::cmp::Reverse(k)));
                let Some(k) = best else { break };
                issued[k] = Some(cycle);
                remaining -= 1;
                let (unit, latency) = info[k];
                match unit {
                    Unit::Free => {}
                    Unit::Alu => slots -= 1,
                    Unit::Memory => {
                        slots -= 1;
                        memory = true;
                    }
                    Unit::Long => {
                        slots -= 1;
                        pipe_b = true;
                    }
                    Unit::Divider(d) => {
                        slots -= 1;
                        pipe_b = true;
                        divider_free_at[d] = cycle + latency;
                    }
                }
                if unit != Unit::Free {
                    issue_end = issue_end.max(cycle + 1);
                }
                if self.is_output[k] {
                    end = end.max(cycle + latency);
                }
            }
            if remaining > 0 {
                cycle += 1;
            }
        }
        Trip {
            issued: issued.into_iter().map(|c| c.unwrap_or(0)).collect(),
            issue_end,
            end: end.max(issue_end),
            divider_free_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of the first block of the only function of `src`, without its
    /// terminator, and the function.
    fn body(src: &str) -> (ir::Module, Vec<Inst>) {
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let b = f.entry_block();
        let insts = f
            .layout
            .block_insts(b)
            .filter(|&i| Some(i) != f.terminator(b))
            .collect();
        (m, insts)
    }

    fn length(src: &str, outputs: &[u32], group: &dyn Fn(Inst) -> u32) -> u32 {
        let (m, insts) = body(src);
        let f = m.funcs.values().next().unwrap();
        let outputs: Vec<Value> = outputs
            .iter()
            .map(|&k| f.inst_result(insts[k as usize]).unwrap())
            .collect();
        schedule_length(f, &insts, &outputs, group)
    }

    const LOADS_THEN_MULTIPLIES: &str = r#"
func @f(ptr, ptr, ptr, ptr, i32) -> i32 {
bb0(%0: ptr, %1: ptr, %2: ptr, %3: ptr, %4: i32):
  %5 = load i32, %0
  %6 = load i32, %1
  %7 = load i32, %2
  %8 = load i32, %3
  %9 = mul %5, %4
  %10 = mul %6, %4
  %11 = mul %7, %4
  %12 = mul %8, %4
  ret %12
}
"#;

    /// One load issues a cycle (pipe A), each multiply three cycles after its load
    /// and one a cycle (pipe B): loads in cycles 0-3, multiplies in 3-6.
    #[test]
    fn one_memory_access_and_one_multiply_issue_per_cycle() {
        assert_eq!(length(LOADS_THEN_MULTIPLIES, &[], &|_| 0), 7);
        // When the last product is wanted at the end (ready three cycles after
        // its multiply issues), its load goes first: still 7 cycles, not 9.
        assert_eq!(length(LOADS_THEN_MULTIPLIES, &[7], &|_| 0), 7);
    }

    /// A divider takes one division at a time: the second starts when the first
    /// is done, while an addition pairs with the first and a multiply follows it.
    #[test]
    fn a_divider_takes_one_division_at_a_time() {
        let src = r#"
func @f(i32, i32, i32) -> i32 {
bb0(%0: i32, %1: i32, %2: i32):
  %3 = sdiv %0, %1
  %4 = sdiv %0, %2
  %5 = add %0, %2
  %6 = mul %0, %2
  ret %5
}
"#;
        assert_eq!(length(src, &[], &|_| 0), 21);
        assert_eq!(length(src, &[2], &|_| 0), 21);
    }

    /// A load after a store waits for it in the same group (memory that may
    /// overlap), and goes first in another.
    #[test]
    fn groups_separate_memory_order() {
        let src = r#"
func @f(ptr, ptr, i32) -> i32 {
bb0(%0: ptr, %1: ptr, %2: i32):
  store %2, %0
  %3 = load i32, %1
  %4 = mul %3, %2
  ret %4
}
"#;
        // Store in cycle 0, load in 1, multiply in 4.
        assert_eq!(length(src, &[], &|_| 0), 5);
        // Load in 0, store in 1, multiply in 3.
        let (m, insts) = body(src);
        let store = insts[0];
        let _ = m;
        assert_eq!(length(src, &[], &|i| u32::from(i == store)), 4);
    }

    fn steady(src: &str, previous: &[(u32, u32)]) -> u32 {
        let (m, insts) = body(src);
        let f = m.funcs.values().next().unwrap();
        let b = f.entry_block();
        let previous: Vec<(Value, Value)> = previous
            .iter()
            .map(|&(p, k)| {
                (
                    f.block_params(b)[p as usize],
                    f.inst_result(insts[k as usize]).unwrap(),
                )
            })
            .collect();
        let map = |v: Value| previous.iter().find(|(p, _)| *p == v).map(|&(_, n)| n);
        steady_state_length(f, &insts, &map, &|_| 0)
    }

    /// An access folds a constant offset that fits its 12-bit immediate; a larger
    /// one takes an addition first.
    #[test]
    fn only_offsets_within_an_immediate_are_free() {
        let src = |stride: u32| {
            format!(
                "func @f(ptr) -> i32 {{\nbb0(%0: ptr):\n  %1 = gep %0, 1, {stride}\n  %2 = load i32, %1\n  ret %2\n}}\n"
            )
        };
        assert_eq!(length(&src(2044), &[1], &|_| 0), 3);
        assert_eq!(length(&src(4000), &[1], &|_| 0), 4);
    }

    /// A loop kernel that stores the value the previous trip converted and added:
    /// the store waits for the addition still in flight, but the trip does not.
    #[test]
    fn a_trip_does_not_wait_for_what_only_the_next_trip_reads() {
        let src = r#"
func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  store %3, %0
  %2 = sitofp %1
  %3 = fadd %2, 1.0
  ret 0
}
"#;
        // Convert in cycle 0, add in 3, branch in 4: five cycles a trip; the sum
        // is ready three cycles into the next trip, where the store goes.
        assert_eq!(steady(src, &[]), 5);
        // Waiting for the sum within the trip, as a straight-line block does.
        assert_eq!(length(src, &[2], &|_| 0), 8);
    }

    /// A division whose quotient only the next trip reads: the trip does not wait
    /// for it, but the next trip's division waits for the divider.
    #[test]
    fn the_divider_stays_busy_into_the_next_trip() {
        let src = r#"
func @f(f32, f32) -> i32 {
bb0(%0: f32, %1: f32):
  %2 = fadd %3, %1
  %3 = fdiv %0, %1
  ret 0
}
"#;
        assert_eq!(steady(src, &[]), 27);
    }

    /// An accumulator carried through a loop parameter: each trip's addition
    /// waits the five cycles of the previous one.
    #[test]
    fn a_recurrence_through_a_parameter_sets_the_trip_length() {
        let src = r#"
func @f(f32, f32) -> i32 {
bb0(%0: f32, %1: f32):
  %2 = fadd %0, %1
  ret 0
}
"#;
        assert_eq!(steady(src, &[(0, 0)]), 5);
        // Without the recurrence: the addition and the branch.
        assert_eq!(steady(src, &[]), 2);
    }

    /// A value defined later in the list is the previous trip's, ready at the
    /// start: the loop kernel's reading of the last trip's loads does not wait.
    #[test]
    fn later_definitions_are_ready_at_the_start() {
        let src = r#"
func @f(ptr, i32) -> i32 {
bb0(%0: ptr, %1: i32):
  %2 = mul %3, %1
  %3 = load i32, %0
  ret %2
}
"#;
        assert_eq!(length(src, &[], &|_| 0), 1);
    }

    #[test]
    fn a_recurrence_is_the_longest_chain_from_a_parameter_to_its_next_value() {
        // x' = (x * 3) + y (3 + 1 cycles); y' = y + 1 (1 cycle); z' = load (not
        // through z).
        let src = r#"
global @g: [i32; 4] = zeroinit

func @f(i32) -> i32 {
bb0(%0: i32):
  jump bb1(1, 2, 3)
bb1(%1: i32, %2: i32, %3: i32):
  %4 = mul %1, 3
  %5 = add %4, %2
  %6 = add %2, 1
  %7 = load i32, @g
  %8 = slt %6, %0
  br %8, bb1(%5, %6, %7), bb2
bb2:
  ret %5
}
"#;
        let m = ir::parse_module(src).unwrap();
        let f = m.funcs.values().next().unwrap();
        let h = f.layout.blocks().nth(1).unwrap();
        let body: Vec<Inst> = f.layout.block_insts(h).collect();
        let body = &body[..body.len() - 1];
        let params = f.block_params(h).to_vec();
        let term = f.terminator(h).unwrap();
        let next = f.kind(term).targets()[0].args.clone();
        let previous = |v: Value| params.iter().position(|&p| p == v).map(|k| next[k]);
        assert_eq!(recurrence_length(f, body, &previous), 4);
    }
}
