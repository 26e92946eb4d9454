//! `--emit dot`: each function's control-flow graph and dominator tree as one
//! Graphviz graph (as LLVM's `-dot-cfg` and `-dot-dom`), to render with
//! `dot -Tsvg prog.dot -o prog.svg`.
//!
//! Per function, one cluster holds the CFG: a box per block with its parameters and
//! instructions as the IR printer spells them, an edge per branch target labelled with
//! the arguments passed (`T`/`F` for the two arms of a `br`). Back edges (to a block
//! that dominates the branch) are red and bold, and the loop headers they reach are
//! shaded. A second cluster holds the dominator tree (an edge from each block's
//! immediate dominator). Unreachable blocks are drawn dashed.

use std::fmt::Write;

use ir::analysis::{ControlFlowGraph, DominatorTree};
use ir::text::Names;
use ir::{Function, InstKind, Module};

/// The Graphviz text for the functions of `m` named in `funcs` (all when empty).
pub fn module_to_dot(m: &Module, funcs: &[String]) -> String {
    let mut out = String::from(
        "digraph sysyc {\n  compound=true;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n",
    );
    for f in m.funcs.values() {
        if f.is_declaration() || !(funcs.is_empty() || funcs.contains(&f.name)) {
            continue;
        }
        function_to_dot(m, f, &mut out);
    }
    out.push_str("}\n");
    out
}

/// A string as a Graphviz quoted string's contents.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn function_to_dot(m: &Module, f: &Function, out: &mut String) {
    let cfg = ControlFlowGraph::compute(f);
    let dom = DominatorTree::compute(f, &cfg);
    let names = Names::new(f);
    let name = escape(&f.name);
    let node = |kind: &str, b: ir::Block| format!("\"{kind}.{name}.{}\"", names.block(b));
    // Loop headers: targets of back edges.
    let is_back =
        |from: ir::Block, to: ir::Block| dom.is_reachable(from) && dom.dominates(to, from);
    let mut headers = Vec::new();
    for b in f.layout.blocks() {
        for &s in cfg.succs(b) {
            if is_back(b, s) && !headers.contains(&s) {
                headers.push(s);
            }
        }
    }

    let _ = writeln!(out, "  subgraph \"cluster_cfg.{name}\" {{");
    let _ = writeln!(out, "    label=\"@{name}: control-flow graph\";");
    for b in f.layout.blocks() {
        let mut label = escape(&ir::text::print_block_header(f, &names, b));
        label.push_str("\\l");
        for i in f.layout.block_insts(b) {
            label.push_str("  ");
            label.push_str(&escape(&ir::text::print_inst(m, f, &names, i)));
            label.push_str("\\l");
        }
        let mut attrs = format!("label=\"{label}\"");
        if headers.contains(&b) {
            attrs.push_str(", style=filled, fillcolor=\"#fff3c4\", xlabel=\"loop header\"");
        } else if !dom.is_reachable(b) {
            attrs.push_str(", style=dashed");
        }
        let _ = writeln!(out, "    {} [{attrs}];", node("cfg", b));
    }
    for b in f.layout.blocks() {
        let Some(term) = f.layout.last_inst(b) else {
            continue;
        };
        let kind = f.kind(term);
        let arms: &[&str] = match kind {
            InstKind::Br { .. } => &["T", "F"],
            _ => &[""],
        };
        for (call, arm) in kind.targets().into_iter().zip(arms) {
            let args: Vec<String> = call.args.iter().map(|&v| names.operand(m, f, v)).collect();
            let mut label = arm.to_string();
            if !args.is_empty() {
                if !label.is_empty() {
                    label.push(' ');
                }
                let _ = write!(label, "({})", args.join(", "));
            }
            let mut attrs = format!("label=\"{}\"", escape(&label));
            if is_back(b, call.block) {
                attrs.push_str(", color=red, penwidth=2, fontcolor=red, xlabel=\"back edge\"");
            }
            let _ = writeln!(
                out,
                "    {} -> {} [{attrs}];",
                node("cfg", b),
                node("cfg", call.block)
            );
        }
    }
    out.push_str("  }\n");

    let _ = writeln!(out, "  subgraph \"cluster_dom.{name}\" {{");
    let _ = writeln!(out, "    label=\"@{name}: dominator tree\";");
    for b in f.layout.blocks().filter(|&b| dom.is_reachable(b)) {
        let _ = writeln!(
            out,
            "    {} [label=\"{}\"];",
            node("dom", b),
            names.block(b)
        );
    }
    for b in f.layout.blocks().filter(|&b| dom.is_reachable(b)) {
        if let Some(idom) = dom.idom(b) {
            let _ = writeln!(out, "    {} -> {};", node("dom", idom), node("dom", b));
        }
    }
    out.push_str("  }\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "func @main() -> i32 {\nbb0:\n  jump bb1(0)\nbb1(%0: i32):\n  %1 = slt %0, 10\n  br %1, bb2, bb3\nbb2:\n  %2 = add %0, 1\n  jump bb1(%2)\nbb3:\n  ret %0\n}\n";

    #[test]
    fn a_loop_has_one_back_edge_its_header_and_a_dominator_tree() {
        let m = ir::parse_module(LOOP).unwrap();
        let dot = module_to_dot(&m, &[]);
        assert!(dot.starts_with("digraph sysyc {\n") && dot.ends_with("}\n"));
        let back: Vec<&str> = dot.lines().filter(|l| l.contains("back edge")).collect();
        assert_eq!(back.len(), 1, "{dot}");
        assert!(back[0].contains("\"cfg.main.bb2\" -> \"cfg.main.bb1\" [label=\"(%2)\""));
        assert!(dot.contains("\"cfg.main.bb0\" -> \"cfg.main.bb1\" [label=\"(0)\"];"));
        assert!(dot.contains("\"cfg.main.bb1\" -> \"cfg.main.bb2\" [label=\"T\"];"));
        assert!(dot.contains("\"cfg.main.bb1\" -> \"cfg.main.bb3\" [label=\"F\"];"));
        assert_eq!(dot.matches("loop header").count(), 1);
        assert!(dot.contains("  %1 = slt %0, 10\\l"));
        // The dominator tree: bb0 -> bb1 -> {bb2, bb3}.
        for (a, b) in [("bb0", "bb1"), ("bb1", "bb2"), ("bb1", "bb3")] {
            assert!(
                dot.contains(&format!("\"dom.main.{a}\" -> \"dom.main.{b}\";")),
                "{dot}"
            );
        }
        assert_eq!(dot.matches("\"dom.main.").count(), 4 + 2 * 3);
        assert_eq!(
            module_to_dot(&m, &["other".to_string()]),
            module_to_dot(&ir::Module::default(), &[])
        );
    }
}
