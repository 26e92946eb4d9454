//! Test helper: functions whose CFG is given as an edge list, so analyses can be
//! checked against the figures of the papers.

use ir::{Block, FuncBuilder, Function, Signature, Type};

/// A function with `n` blocks (block 0 is the entry) and the given edges, in the
/// order listed. A block with two successors branches on its parameter-free constant
/// condition; a block with none returns.
pub fn cfg_func(n: usize, edges: &[(usize, usize)]) -> (Function, Vec<Block>) {
    let mut f = Function::new(
        "t",
        Signature {
            params: vec![Type::I32],
            ret: Type::Void,
            variadic: false,
        },
    );
    let blocks: Vec<Block> = (0..n).map(|_| f.append_new_block()).collect();
    let cond = f.append_block_param(blocks[0], Type::I32);
    let mut b = FuncBuilder::new(&mut f);
    for (i, &blk) in blocks.iter().enumerate() {
        b.switch_to_block(blk);
        let succ: Vec<usize> = edges.iter().filter(|e| e.0 == i).map(|e| e.1).collect();
        match succ.as_slice() {
            [] => {
                b.ret(None);
            }
            [s] => {
                b.jump(blocks[*s], vec![]);
            }
            [s, t] => {
                b.br(cond, blocks[*s], vec![], blocks[*t], vec![]);
            }
            _ => panic!("at most two successors"),
        }
    }
    (f, blocks)
}

/// Indices of `set` within `blocks`, sorted: a readable form for assertions.
pub fn idx(blocks: &[Block], set: &[Block]) -> Vec<usize> {
    let mut v: Vec<usize> = set
        .iter()
        .map(|b| {
            blocks
                .iter()
                .position(|x| x == b)
                .expect("block of the test")
        })
        .collect();
    v.sort_unstable();
    v
}

/// The control-flow graph of Figure 5 of Cytron et al. 1991: Entry = 0, nodes 1-12,
/// Exit = 13, with the Entry -> Exit edge the paper adds.
pub const CYTRON_FIG5: &[(usize, usize)] = &[
    (0, 1),
    (0, 13),
    (1, 2),
    (2, 3),
    (2, 7),
    (3, 4),
    (3, 5),
    (4, 6),
    (5, 6),
    (6, 8),
    (7, 8),
    (8, 9),
    (9, 10),
    (9, 11),
    (10, 11),
    (11, 9),
    (11, 12),
    (12, 2),
    (12, 13),
];
