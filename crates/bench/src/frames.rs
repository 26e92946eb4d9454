//! `bench frames`: each function's stack frame in sysyc's assembly against gcc -O2's.
//!
//! A frame beyond 2 KiB costs an extra `add` on every stack access whose offset no
//! longer fits a 12-bit immediate, so a function whose gcc frame fits in 2 KiB should
//! fit there with sysyc too. The frame of a function is what its prologue takes
//! from `sp` (the `addi sp, sp, -N` or `li t, -N; add sp, sp, t` before the first
//! instruction that gives stack back, returns or tail-calls). sysyc may inline a
//! callee gcc keeps; the callee's gcc frame then counts as part of the caller's
//! (a 2 KiB local array inlined into `main` is not overhead).

use std::collections::BTreeMap;

/// Stack bytes the prologue of each function in `asm` allocates (GNU assembler
/// syntax as sysyc and gcc print it). Functions are delimited by
/// `.type NAME, @function`.
pub fn frame_sizes(asm: &str) -> BTreeMap<String, i64> {
    let mut frames = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut finished = false;
    let mut constants: BTreeMap<String, i64> = BTreeMap::new();
    for line in asm.lines() {
        let text = line.split('#').next().unwrap_or("").replace(',', " ");
        let t: Vec<&str> = text.split_whitespace().collect();
        if t.len() >= 3 && t[0] == ".type" && t[2] == "@function" {
            current = Some(t[1].to_string());
            finished = false;
            constants.clear();
            frames.insert(t[1].to_string(), 0);
            continue;
        }
        let Some(name) = &current else { continue };
        if finished {
            continue;
        }
        let change = match t.as_slice() {
            ["li", reg, value] => {
                if let Ok(v) = value.parse::<i64>() {
                    constants.insert(reg.to_string(), v);
                }
                None
            }
            ["addi", "sp", "sp", imm] => imm.parse::<i64>().ok(),
            ["add", "sp", "sp", reg] => constants.get(*reg).copied(),
            ["sub", "sp", "sp", reg] => constants.get(*reg).map(|v| -v),
            ["ret"] | ["tail", ..] | ["jr", ..] => {
                finished = true;
                None
            }
            _ => None,
        };
        match change {
            Some(d) if d < 0 => *frames.entry(name.clone()).or_insert(0) -= d,
            Some(_) => finished = true,
            None => {}
        }
    }
    frames
}

/// A function whose sysyc frame needs offsets beyond 2 KiB where gcc's does not.
#[derive(Debug, PartialEq, Eq)]
pub struct Oversized {
    /// The function's name.
    pub function: String,
    /// sysyc's frame in bytes.
    pub sysyc: i64,
    /// gcc's frame for it (with the callees sysyc inlined), in bytes.
    pub gcc: i64,
}

/// The largest frame whose every slot a 12-bit signed offset from `sp` reaches.
pub const NEAR_FRAME: i64 = 2048;

/// The functions of sysyc's `ours` whose frame exceeds [`NEAR_FRAME`] while gcc's
/// `theirs`, counting the frames of functions gcc kept and sysyc did not (inlined
/// or removed; gcc's own clones such as `f.part.0` aside), stays under it.
pub fn oversized(ours: &BTreeMap<String, i64>, theirs: &BTreeMap<String, i64>) -> Vec<Oversized> {
    let inlined = theirs
        .iter()
        .filter(|(name, _)| !ours.contains_key(*name) && !name.contains('.'))
        .map(|(_, &size)| size)
        .max()
        .unwrap_or(0);
    ours.iter()
        .filter_map(|(name, &size)| {
            let gcc = theirs.get(name)?.max(&inlined);
            (size > NEAR_FRAME && *gcc < NEAR_FRAME).then(|| Oversized {
                function: name.clone(),
                sysyc: size,
                gcc: *gcc,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYSYC: &str = "\t.text\n\t.type f, @function\nf:\n\taddi sp, sp, -224\n\tsd ra, 0(sp)\n\
        \taddi sp, sp, 224\n\tret\n\t.type main, @function\nmain:\n\tli t0, -4096\n\
        \tadd sp, sp, t0\n\taddi sp, sp, -32\n\tcall f\n\tli t0, 4096\n\tadd sp, sp, t0\n\
        \tret\n\t.type leaf, @function\nleaf:\n\taddi a0, a0, 1\n\tret\n";

    #[test]
    fn prologue_adjustments_add_up_until_the_stack_is_given_back() {
        let f = frame_sizes(SYSYC);
        assert_eq!(f["f"], 224);
        assert_eq!(f["main"], 4096 + 32);
        assert_eq!(f["leaf"], 0);
    }

    #[test]
    fn gcc_syntax_and_a_large_frame_through_sub() {
        let gcc = "\t.type\tg, @function\ng:\n\tli\tt0,8192\n\tsub\tsp,sp,t0\n\tret\n\
            \t.type\th, @function\nh:\n\taddi\tsp,sp,-16\n\taddi\tsp,sp,16\n\tjr\tra\n";
        let f = frame_sizes(gcc);
        assert_eq!(f["g"], 8192);
        assert_eq!(f["h"], 16);
    }

    #[test]
    fn a_big_frame_is_reported_unless_gcc_needs_one_or_a_callee_was_inlined() {
        let ours = BTreeMap::from([("main".to_string(), 4128), ("f".to_string(), 224)]);
        let small = BTreeMap::from([("main".to_string(), 32), ("f".to_string(), 224)]);
        assert_eq!(
            oversized(&ours, &small),
            vec![Oversized {
                function: "main".into(),
                sysyc: 4128,
                gcc: 32
            }]
        );
        let big = BTreeMap::from([("main".to_string(), 4096), ("f".to_string(), 224)]);
        assert!(oversized(&ours, &big).is_empty());
        // gcc kept `g` (a 3 KiB local array) that sysyc inlined into main.
        let kept = BTreeMap::from([
            ("main".to_string(), 16),
            ("f".to_string(), 224),
            ("g".to_string(), 3072),
        ]);
        assert!(oversized(&ours, &kept).is_empty());
        // gcc's own clone of a function does not count as inlined by sysyc.
        let clone = BTreeMap::from([
            ("main".to_string(), 16),
            ("f".to_string(), 224),
            ("g.part.0".to_string(), 3072),
        ]);
        assert_eq!(oversized(&ours, &clone).len(), 1);
    }
}
