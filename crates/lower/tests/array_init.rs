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

/// The module of `src`, lowered in both forms (checked to agree on the globals).
fn lower_both(src: &str) -> [ir::Module; 2] {
    let program = front::check("t.sy", src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", src)));
    [false, true].map(|memory_form| {
        let m = lower::lower_program(&program, memory_form);
        ir::verify_module(&m).unwrap();
        m
    })
}

/// The module's constant initialiser image (the only one).
fn image_of(m: &ir::Module) -> &ir::GlobalData {
    m.globals
        .values()
        .find(|g| g.name.starts_with("__sysy_init_"))
        .expect("an image global")
}

/// The number of stores in `func`, and their kinds of stored value: constants or not.
fn stores(m: &ir::Module, func: &str) -> (usize, usize) {
    let f = m.funcs.values().find(|f| f.name == func).expect("function");
    let mut constant = 0;
    let mut other = 0;
    for block in f.layout.blocks() {
        for inst in f.layout.block_insts(block) {
            if let InstKind::Store { value, .. } = f.kind(inst) {
                if f.as_iconst(*value).is_some() || f.as_fconst(*value).is_some() {
                    constant += 1;
                } else {
                    other += 1;
                }
            }
        }
    }
    (constant, other)
}

/// A long list of constants (here 100 of an array of 200, the last non-zero at index
/// 97) is copied from a global image of the elements up to the last non-zero one, and
/// the rest is zeroed by a loop: two stores in all, whatever the length of the list.
#[test]
fn a_long_constant_list_is_copied_from_a_global_image() {
    let listed: Vec<String> = (0..100)
        .map(|i| {
            if i >= 98 || i % 10 == 3 {
                0
            } else {
                i * 7 - 300
            }
            .to_string()
        })
        .collect();
    let src = format!(
        "void f() {{ int a[4][50] = {{{}}}; putint(a[1][7]); }}\nint main() {{ f(); return 0; }}\n",
        listed.join(", ")
    );
    for m in lower_both(&src) {
        let image = image_of(&m);
        let want: Vec<u32> = (0..98)
            .map(|i: i32| if i % 10 == 3 { 0 } else { (i * 7 - 300) as u32 })
            .collect();
        assert_eq!(image.elem, ir::Type::I32);
        assert_eq!(image.len, 98);
        assert_eq!(image.init, ir::GlobalInit::Words(want));
        // One store copies the image, one stores the zero of the tail.
        assert_eq!(stores(&m, "f"), (1, 1));
    }
}

/// Floats are imaged by their bit patterns; an array the image covers whole gets no
/// zero loop.
#[test]
fn a_long_float_list_is_imaged_by_its_bits() {
    let listed: Vec<String> = (0..64).map(|i| format!("{}.5", i)).collect();
    let src = format!(
        "void f() {{ float x[64] = {{{}}}; putfloat(x[3]); }}\nint main() {{ f(); return 0; }}\n",
        listed.join(", ")
    );
    for m in lower_both(&src) {
        let image = image_of(&m);
        let want: Vec<u32> = (0..64).map(|i| (i as f32 + 0.5).to_bits()).collect();
        assert_eq!(image.elem, ir::Type::F32);
        assert_eq!(image.init, ir::GlobalInit::Words(want));
        assert_eq!(stores(&m, "f"), (0, 1));
    }
}

/// Short lists, lists with a non-constant element and lists of zeros only are stored
/// element by element as before: no image.
#[test]
fn short_non_constant_or_zero_lists_get_no_image() {
    let long_with_call: Vec<String> = (0..80)
        .map(|i| {
            if i == 40 {
                "getint()".into()
            } else {
                (i + 1).to_string()
            }
        })
        .collect();
    let zeros = vec!["0"; 100].join(", ");
    let src = format!(
        "void f() {{ int a[80] = {{{}}}; putint(a[3]); }}\n\
         void g() {{ int b[100] = {{{zeros}}}; putint(b[3]); }}\n\
         void h() {{ int c[63] = {{1, 2, 3}}; putint(c[3]); }}\n\
         int main() {{ f(); g(); h(); return 0; }}\n",
        long_with_call.join(", ")
    );
    for m in lower_both(&src) {
        assert!(m
            .globals
            .values()
            .all(|g| !g.name.starts_with("__sysy_init_")));
        assert_eq!(stores(&m, "f"), (79, 1));
    }
}
