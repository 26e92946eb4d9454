//! User lists after operand rewrites equal, entry for entry and in order, those of
//! the plain rule (each dropped operand removes the list's last entry for its
//! instruction by a swap with the list's end), which the position index of long
//! lists must reproduce: random rewrites of calls, binary operations and branches,
//! with repeated operands, over values with long lists.

use std::collections::HashMap;

use ir::{BinOp, BlockCall, FuncId, Function, Inst, InstKind, Signature, Type, Value};

/// The plain rule's user lists, kept beside the function.
#[derive(Default)]
struct Model {
    users: HashMap<Value, Vec<Inst>>,
}

impl Model {
    fn add(&mut self, f: &Function, inst: Inst) {
        f.kind(inst).for_each_arg(|a| {
            if !f.value_def(a).is_constant() {
                self.users.entry(a).or_default().push(inst);
            }
        });
    }

    fn remove(&mut self, f: &Function, inst: Inst) {
        f.kind(inst).for_each_arg(|a| {
            let list = self.users.entry(a).or_default();
            if let Some(pos) = list.iter().rposition(|&u| u == inst) {
                list.swap_remove(pos);
            }
        });
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, m: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize % m
    }
}

fn random_kind(rng: &mut Rng, vals: &[Value], target: ir::Block) -> InstKind {
    let pick = |rng: &mut Rng| vals[rng.below(vals.len())];
    match rng.below(3) {
        0 => InstKind::Binary {
            op: BinOp::Add,
            args: [pick(rng), pick(rng)],
        },
        1 => {
            let n = rng.below(12);
            InstKind::Call {
                callee: FuncId::from_u32(0),
                args: (0..n).map(|_| pick(rng)).collect(),
            }
        }
        _ => {
            let n = rng.below(4);
            InstKind::Jump {
                dest: Box::new(BlockCall::new(
                    target,
                    (0..n).map(|_| pick(rng)).collect::<Vec<_>>(),
                )),
            }
        }
    }
}

#[test]
fn rewrites_keep_the_plain_rules_user_lists() {
    for seed in 0..20 {
        let mut rng = Rng(seed);
        let mut f = Function::new(
            "f",
            Signature {
                params: vec![Type::I32; 4],
                ret: Type::Void,
                variadic: false,
            },
        );
        let b = f.append_new_block();
        let mut vals: Vec<Value> = (0..4).map(|_| f.append_block_param(b, Type::I32)).collect();
        vals.push(f.iconst(7));
        let mut model = Model::default();
        let mut insts = Vec::new();
        for _ in 0..300 {
            let kind = random_kind(&mut rng, &vals, b);
            let i = f.make_inst(kind, Type::Void);
            model.add(&f, i);
            insts.push(i);
        }
        for step in 0..3000 {
            let i = insts[rng.below(insts.len())];
            model.remove(&f, i);
            if step % 3 == 0 {
                // Rewrite one value everywhere in the instruction, as SSA repair does.
                let (from, to) = (vals[rng.below(4)], vals[rng.below(vals.len())]);
                f.map_inst_args(i, |a| if a == from { to } else { a });
            } else {
                let kind = random_kind(&mut rng, &vals, b);
                f.replace_kind(i, kind);
            }
            model.add(&f, i);
        }
        for &v in &vals[..4] {
            let expected = model.users.get(&v).cloned().unwrap_or_default();
            assert_eq!(f.users(v), &expected[..], "seed {seed}, {v}");
        }
    }
}
