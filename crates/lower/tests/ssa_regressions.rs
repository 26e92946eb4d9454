//! Programs that once broke the Braun SSA builder during lowering.

/// Lowers `src` in both forms and verifies the IR.
fn lowers(src: &str) {
    let program = front::check("t.sy", src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", src)));
    for memory_form in [false, true] {
        let m = lower::lower_program(&program, memory_form);
        ir::verify_module(&m).unwrap_or_else(|e| panic!("memory form {memory_form}:\n{e}"));
    }
}

#[test]
fn a_parameter_met_again_while_its_arguments_are_added_is_not_removed_early() {
    // Found by the random programs of the opt crate (seed 55594): sealing the outer
    // loop's header fills a parameter edge by edge; reading the variable on a later
    // edge came back to that parameter through the inner loop, judged it trivial on
    // the edges filled so far and removed it, while the other edges had no argument
    // for it yet (Vec::remove out of range).
    lowers(
        r#"
int ix(int x) { int r = x % 8; if (r < 0) r = r + 8; return r; }
int main() {
  int loc[8] = {};
  int v0 = 3;
  int v2 = 3;
  int v3 = 7;
  int v4 = 5;
  if (1) {
  } else {
    int k0 = 0;
    while (k0 < 2) {
      v2 = v2; v2 = v3; v3 = v2;
      int k1 = 0;
      while (k1 < 1) {
        v3 = v0;
        v2 = v2 + loc[ix((v4 - v0))];
      }
    }
  }
  return v2 + v3;
}
"#,
    );
}

#[test]
fn a_phi_replaced_by_a_function_parameter_keeps_the_parameter() {
    // Found by difftest (seed 37275): the loop-header phi of `l` received `p` on
    // every edge and was replaced by it; the worklist then resolved the phi to `p`
    // itself, an entry-block parameter, which with no predecessors looked trivial:
    // `p` was removed and its uses became 0 (the loop never ran).
    let src = r#"
int f(int p) {
    int l = p;
    int i = 7;
    int n = 0;
    while (i > 5 && l) {
        l = p;
        i = i - 2;
        n = n + 1;
    }
    return n;
}
int main() { return f(3); }
"#;
    lowers(src);
    let program = front::check("t.sy", src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", src)));
    let m = lower::lower_program(&program, false);
    let f = m
        .funcs
        .values()
        .find(|f| f.name == "f")
        .expect("f is lowered");
    assert_eq!(
        f.block_params(f.entry_block()).len(),
        1,
        "the parameter stays"
    );
}
