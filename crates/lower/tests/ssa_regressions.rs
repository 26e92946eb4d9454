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

#[test]
fn finished_loops_are_crossed_without_parameters_for_what_they_never_assign() {
    // Reading an outer counter after an inner nest steps over each finished loop
    // that never assigns it (SsaBuilder::finish_loop). With breaks, continues and
    // short-circuit conditions in the nest, and variables assigned only in some
    // loops, the lowering must verify and create exactly the block parameters
    // mem2reg (Cytron et al.) creates: one per variable per header of a loop
    // assigning it (and per join after a loop the variable changes in).
    let src = r#"
int main() {
  int s = getint();
  int t = 1;
  int i0 = 0;
  while (i0 < 3) {
    int i1 = 0;
    while (i1 < 3 && s != 7) {
      int i2 = 0;
      while (i2 < 3) {
        if (s > 100) break;
        s = s + i2;
        i2 = i2 + 1;
        if (i2 == 2) continue;
      }
      if (i1 > 1 || s < 0) { t = t + i0; }
      i1 = i1 + 1;
    }
    int j = 0;
    while (j < i0) { j = j + 1; }
    i0 = i0 + j + i1;
  }
  putint(s + t + i0);
  return 0;
}
"#;
    let program = front::check("t.sy", src).unwrap_or_else(|d| panic!("{}", d.render("t.sy", src)));
    let braun = lower::lower_program(&program, false);
    ir::verify_module(&braun).unwrap_or_else(|e| panic!("Braun:\n{e}"));
    let mut memory = lower::lower_program(&program, true);
    for (_, f) in memory.funcs.iter_mut() {
        if !f.is_declaration() {
            opt::mem2reg(f);
        }
    }
    ir::verify_module(&memory).unwrap_or_else(|e| panic!("mem2reg:\n{e}"));
    assert_eq!(
        opt::count_block_params(&braun),
        opt::count_block_params(&memory)
    );
}
