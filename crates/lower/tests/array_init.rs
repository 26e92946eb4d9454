//! Local array initialisers: a local array with an initialiser list is fully
//! initialised, so lowering must store every element: the listed values, and zero
//! everywhere else. The interpreter zeroes fresh stack memory and cannot tell a
//! missing store from a zero; this test looks at the stores themselves.

use ir::{Function, InstKind};
use std::collections::BTreeMap;

/// The constant stored into each element of the function's only array, by the
/// straight-line stores of its entry block: element index -> stored constant.
fn entry_stores(f: &Function) -> BTreeMap<i64, String> {
    let mut stored = BTreeMap::new();
    let entry = f.entry_block();
    for inst in f.layout.block_insts(entry) {
        let InstKind::Store { value, ptr } = f.kind(inst) else {
            continue;
        };
        let Some(gep) = f.def_inst(*ptr) else {
            continue;
        };
        let InstKind::Gep {
            index, stride: 4, ..
        } = f.kind(gep)
        else {
            continue;
        };
        let Some(index) = f.as_iconst(*index) else {
            continue;
        };
        let shown = match (f.as_iconst(*value), f.as_fconst(*value)) {
            (Some(i), _) => i.to_string(),
            (_, Some(x)) => format!("{x:?}"),
            _ => "?".into(),
        };
        stored.insert(index as i64, shown);
    }
    stored
}

/// The entry stores of `func`, the same in Braun and memory form.
fn lowered(src: &str, func: &str) -> BTreeMap<i64, String> {
    let program = front::check("t.sy", src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", src)));
    let [braun, memory] = [false, true].map(|memory_form| {
        let m = lower::lower_program(&program, memory_form);
        ir::verify_module(&m).unwrap();
        let f = m.funcs.values().find(|f| f.name == func).expect("function");
        entry_stores(f)
    });
    assert_eq!(braun, memory, "Braun and memory form store differently");
    braun
}

fn expect(stores: BTreeMap<i64, String>, want: &[&str]) {
    let got: Vec<(i64, String)> = stores.into_iter().collect();
    let want: Vec<(i64, String)> = want
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, v.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// Difftest seed 34: the explicit `0` of `{0, 1}` was skipped as "zero-filled
/// already", but the zero fill skips the listed elements, so nothing stored it.
#[test]
fn explicit_zeros_in_a_partial_list_are_stored() {
    let src = "void f() { int a[2][2] = {{1}, {0, 1}}; putint(a[1][0]); }\n\
               int main() { f(); return 0; }\n";
    expect(lowered(src, "f"), &["1", "0", "0", "1"]);
}

#[test]
fn every_element_of_a_small_partial_list_is_stored() {
    let src = "void f() { int b[3][2] = {{0}, {0, 0}, {2}}; putint(b[0][0]); }\n\
               void g() { float x[4] = {0.0, 0.0, 0.25}; putfloat(x[0]); }\n\
               void h() { int c[3] = {}; putint(c[0]); }\n\
               int main() { f(); g(); h(); return 0; }\n";
    expect(lowered(src, "f"), &["0", "0", "0", "0", "2", "0"]);
    expect(lowered(src, "g"), &["0.0", "0.0", "0.25", "0.0"]);
    expect(lowered(src, "h"), &["0", "0", "0"]);
}
