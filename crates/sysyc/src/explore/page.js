// The explorer page's script (sysyc --emit html). The data, embedded once as
// base64 of raw DEFLATE, is JSON:
//   file, opt, timed     the input's name, the -O level, whether stages have "ms"
//   start                the function to open on (--filter-print-funcs), if any
//   src                  the source lines
//   funcs                function names (indices below)
//   texts                [text, [source line of each line (0: none)], instructions]
//   stages               {name, kind: "ir"|"mir"|"asm", desc, ms?, f: [func, text, ...]}
// Everything is drawn from it on demand: the three panes (source, the chosen
// stage, the assembly), the diff against the stage before, and the CFG and
// dominator tree of the chosen function at the chosen stage.
"use strict";

const CHUNK = 1500; // lines of a pane drawn at a time
const DIFF_LIMIT = 4000; // diff lines drawn per stage
const GRAPH_LIMIT = 300; // blocks drawn in a graph
let D = null;
const ui = { stage: 0, func: 0, pinned: 0, hover: 0 };
// The view is kept in the URL's fragment (#stage=licm&func=main&line=12, the
// stage by name and its run, e.g. licm.2), to reload or share it.
const SELFTEST = location.hash === "#selftest";
const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// One colour per source line, the same in every pane.
function hue(line) { return (line * 137.508) % 360; }
function tint(line) { return "hsl(" + hue(line).toFixed(1) + " 70% 92%)"; }
function strong(line) { return "hsl(" + hue(line).toFixed(1) + " 85% 74%)"; }

// ---- data ---------------------------------------------------------------

async function load() {
  const b64 = $("data").textContent.trim();
  const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  D = JSON.parse(await new Response(stream).text());
  for (const st of D.stages) {
    st.map = new Map();
    for (let k = 0; k < st.f.length; k += 2) st.map.set(st.f[k], st.f[k + 1]);
    st.total = 0;
    for (const t of st.map.values()) st.total += D.texts[t][2];
  }
  D.stages.forEach((st, k) => {
    const prev = D.stages[k - 1];
    st.changed = !prev || prev.kind !== st.kind || prev.map.size !== st.map.size ||
      [...st.map].some(([f, t]) => prev.map.get(f) !== t);
  });
}

function textOf(stage, func) {
  const t = D.stages[stage].map.get(func);
  return t === undefined ? null : D.texts[t];
}

function lastOfKind(kind) {
  let k = -1;
  D.stages.forEach((st, i) => { if (st.kind === kind) k = i; });
  return k;
}

// ---- panes --------------------------------------------------------------

// Draws rows [from, to) of `rows` ({text, s, n}) into `box`, with buttons for
// the rows before and after; `box.rowsBy` maps a source line to its drawn rows.
function drawRows(box, rows, from) {
  box.textContent = "";
  box.rowsBy = new Map();
  box.allRows = rows;
  // The line numbers' column fits the longest.
  const digits = String(rows.length ? rows[rows.length - 1].n : 1).length;
  box.style.setProperty("--nw", Math.max(3, digits) + 0.5 + "ch");
  from = Math.max(0, Math.min(from, rows.length - 1));
  let lo = from, hi = Math.min(rows.length, from + CHUNK);
  const up = el("button", "more"), down = el("button", "more");
  const holder = el("div");
  const make = (r) => {
    const d = el("div", "l");
    d.appendChild(el("span", "n", String(r.n)));
    d.appendChild(document.createTextNode(r.text));
    if (r.s) {
      d.dataset.s = r.s;
      d.style.background = tint(r.s);
      if (!box.rowsBy.has(r.s)) box.rowsBy.set(r.s, []);
      box.rowsBy.get(r.s).push(d);
    }
    return d;
  };
  const label = () => {
    up.textContent = "▲ " + lo + " earlier lines";
    up.hidden = lo === 0;
    down.textContent = "▼ " + (rows.length - hi) + " more lines";
    down.hidden = hi >= rows.length;
  };
  const fill = (a, b, before) => {
    const frag = document.createDocumentFragment();
    for (let k = a; k < b; k++) frag.appendChild(make(rows[k]));
    if (before) holder.insertBefore(frag, holder.firstChild); else holder.appendChild(frag);
  };
  fill(lo, hi, false);
  up.onclick = () => { const a = Math.max(0, lo - CHUNK); fill(a, lo, true); lo = a; label(); paint(); };
  down.onclick = () => { const b = Math.min(rows.length, hi + CHUNK); fill(hi, b, false); hi = b; label(); paint(); };
  box.drawn = (k) => k >= lo && k < hi;
  label();
  box.append(up, holder, down);
  if (rows.length === 0) box.appendChild(el("div", "note", "(nothing)"));
}

function rowsOf(t) {
  const lines = t[0].split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((text, k) => ({ text, s: t[1][k] || 0, n: k + 1 }));
}

// The source lines a function comes from (its lowered IR's), or null.
function funcRange(func) {
  const t = textOf(0, func) || textOf(D.stages.length - 1, func);
  if (!t) return null;
  const ls = t[1].filter((x) => x > 0);
  return ls.length ? [Math.min(...ls), Math.max(...ls)] : null;
}

function drawSource() {
  const rows = D.src.map((text, k) => ({ text, s: k + 1, n: k + 1 }));
  const r = funcRange(ui.func);
  const first = r ? r[0] - 1 : 0;
  let from = rows.length > CHUNK ? Math.max(0, first - 3) : 0;
  if (ui.pinned && (ui.pinned - 1 < from || ui.pinned - 1 >= from + CHUNK)) from = Math.max(0, ui.pinned - 20);
  drawRows($("src"), rows, from);
  // Scroll the function's first line to the top.
  const at = $("src").rowsBy.get(first + 1);
  if (at) $("src").scrollTop = at[0].offsetTop - $("src").offsetTop - 40;
}

function drawMid() {
  const st = D.stages[ui.stage];
  const t = textOf(ui.stage, ui.func);
  const kind = { ir: "IR", mir: "machine IR", asm: "assembly" }[st.kind];
  $("mid-title").textContent = kind + " after " + st.name + " (stage " + ui.stage + ")";
  if (!t) {
    $("mid").textContent = "";
    $("mid").rowsBy = new Map();
    $("mid").appendChild(el("div", "note", "@" + D.funcs[ui.func] +
      " is not in the module at this stage (inlined, removed, or not compiled yet)."));
    return;
  }
  drawRows($("mid"), rowsOf(t), 0);
}

function drawAsm() {
  const t = textOf(D.stages.length - 1, ui.func);
  if (!t) {
    $("asm").textContent = "";
    $("asm").rowsBy = new Map();
    $("asm").appendChild(el("div", "note", "No assembly for @" + D.funcs[ui.func] + " (it was inlined or removed)."));
    return;
  }
  drawRows($("asm"), rowsOf(t), 0);
}

// Highlights the rows of the hovered (else the pinned) source line in all panes.
let lit = [];
function paint() {
  for (const r of lit) { r.classList.remove("hl"); r.style.background = tint(+r.dataset.s); }
  lit = [];
  const line = ui.hover || ui.pinned;
  if (!line) return;
  for (const id of ["src", "mid", "asm"]) {
    for (const r of ($(id).rowsBy && $(id).rowsBy.get(line)) || []) {
      r.classList.add("hl");
      r.style.background = strong(line);
      lit.push(r);
    }
  }
}

// Scrolls `box` so that its first row of `line` shows.
function reveal(box, line) {
  const rows = box.rowsBy && box.rowsBy.get(line);
  if (!rows || !rows.length) return;
  const r = rows[0], top = r.offsetTop - box.offsetTop;
  if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 20) box.scrollTop = top - box.clientHeight / 3;
}

function pin(line, from) {
  ui.pinned = ui.pinned === line && from === "src" ? 0 : line;
  ui.hover = 0;
  if (ui.pinned && from !== "src" && !$("src").rowsBy.has(line)) {
    drawRows($("src"), $("src").allRows, Math.max(0, line - 20));
  }
  paint();
  for (const id of ["src", "mid", "asm"]) if (id !== from) reveal($(id), line);
  saveView();
}

$("diff").addEventListener("click", (e) => {
  const r = e.target.closest(".l[data-s]");
  if (r) pin(+r.dataset.s, "diff");
});
for (const id of ["src", "mid", "asm"]) {
  const box = $(id);
  box.addEventListener("click", (e) => {
    const r = e.target.closest(".l[data-s]");
    if (r) pin(+r.dataset.s, id);
  });
  box.addEventListener("mouseover", (e) => {
    const r = e.target.closest(".l[data-s]");
    const s = r ? +r.dataset.s : 0;
    if (s !== ui.hover) { ui.hover = s; paint(); }
  });
  box.addEventListener("mouseleave", () => { ui.hover = 0; paint(); });
}

// ---- stages -------------------------------------------------------------

function drawStageList() {
  const ol = $("stage-list");
  ol.textContent = "";
  D.stages.forEach((st, k) => {
    const li = el("li");
    const prev = D.stages[k - 1];
    if (!st.changed) li.classList.add("same");
    if (prev && prev.kind !== st.kind) li.classList.add("kind");
    const name = k + ". " + st.name + (st.kind === "mir" ? " (MIR)" : "");
    li.appendChild(el("span", "", name));
    const cnt = (prev ? prev.total + " → " : "") + st.total + (D.timed ? "  " + st.ms.toFixed(2) + " ms" : "");
    li.appendChild(el("span", "cnt", cnt));
    li.title = st.desc + (st.changed ? "" : " (changed nothing)");
    li.onclick = () => select(k);
    ol.appendChild(li);
  });
}

function drawFuncs() {
  const sel = $("func");
  sel.textContent = "";
  D.funcs.forEach((f, k) => {
    const o = el("option", "", f);
    o.value = k;
    sel.appendChild(o);
  });
  sel.value = ui.func;
  sel.onchange = () => { ui.func = +sel.value; ui.pinned = 0; drawAll(); };
}

function stageKey(k) {
  const name = D.stages[k].name;
  const run = D.stages.slice(0, k + 1).filter((st) => st.name === name).length;
  return run > 1 ? name + "." + run : name;
}

function saveView() {
  if (SELFTEST || !D) return;
  const h = "#stage=" + encodeURIComponent(stageKey(ui.stage)) + "&func=" + encodeURIComponent(D.funcs[ui.func]) +
    (ui.pinned ? "&line=" + ui.pinned : "");
  if (location.hash !== h) history.replaceState(null, "", h);
}

function loadView() {
  const p = new URLSearchParams(location.hash.slice(1));
  const f = D.funcs.indexOf(p.get("func"));
  if (f >= 0) ui.func = f;
  const k = D.stages.findIndex((_, i) => stageKey(i) === p.get("stage"));
  if (k >= 0) ui.stage = k;
  const line = +p.get("line");
  if (line > 0 && line <= D.src.length) ui.pinned = line;
}

function select(k) {
  ui.stage = Math.max(0, Math.min(D.stages.length - 1, k));
  drawStage();
}

function drawStage() {
  const st = D.stages[ui.stage];
  $("slider").value = ui.stage;
  [...$("stage-list").children].forEach((li, k) => li.classList.toggle("cur", k === ui.stage));
  const cur = $("stage-list").children[ui.stage];
  if (cur) cur.scrollIntoView({ block: "nearest" });
  const title = $("stage-title");
  title.textContent = ui.stage + ". " + st.name;
  title.appendChild(el("span", "desc", st.desc + (st.changed ? "" : " — changed nothing")));
  drawMid();
  drawDiff();
  drawGraphs();
  paint();
  saveView();
}

function drawAll() {
  drawSource();
  drawAsm();
  drawStage();
}

// ---- diffs --------------------------------------------------------------

// The line edits from a to b: [op, line] with op "=", "-" or "+", each change
// with its removed lines before its added ones (Myers' O(ND) algorithm after the
// common ends are set aside; beyond `maxD` edits, the middle is all replaced).
function diffLines(a, b, maxD = 2000) {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre &&
    a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const A = a.slice(pre, a.length - suf), B = b.slice(pre, b.length - suf);
  const mid = myers(A, B, maxD) || [...A.map((l) => ["-", l]), ...B.map((l) => ["+", l])];
  const out = a.slice(0, pre).map((l) => ["=", l]);
  // Removed before added within each run of changes.
  for (let k = 0; k < mid.length;) {
    if (mid[k][0] === "=") { out.push(mid[k++]); continue; }
    const del = [], add = [];
    while (k < mid.length && mid[k][0] !== "=") (mid[k][0] === "-" ? del : add).push(mid[k++]);
    out.push(...del, ...add);
  }
  for (const l of a.slice(a.length - suf)) out.push(["=", l]);
  return out;
}

function myers(A, B, maxD) {
  const n = A.length, m = B.length, max = n + m, off = max + 1;
  if (max === 0) return [];
  const v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= Math.min(max, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && A[x] === B[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(A, B, trace, d);
    }
  }
  return null;
}

function backtrack(A, B, trace, dEnd) {
  const out = [];
  let x = A.length, y = B.length;
  for (let d = dEnd; d > 0; d--) {
    const vs = trace[d], get = (k) => vs[k + d + 1]; // v[k] after step d - 1
    const k = x - y;
    const prevK = (k === -d || (k !== d && get(k - 1) < get(k + 1))) ? k + 1 : k - 1;
    const px = get(prevK), py = px - prevK;
    while (x > px && y > py) { out.push(["=", A[x - 1]]); x--; y--; }
    if (prevK === k + 1) { out.push(["+", B[y - 1]]); y--; } else { out.push(["-", A[x - 1]]); x--; }
  }
  while (x > 0 && y > 0) { out.push(["=", A[x - 1]]); x--; y--; }
  return out.reverse();
}

// The hunks of an edit list, with `ctx` lines of context:
// {a, an, b, bn, rows: [op, line]} (1-based starts, as `diff -u` writes them).
function hunks(edits, ctx = 3) {
  const out = [];
  const change = edits.map((e) => e[0] !== "=");
  let k = 0;
  const ai = [], bi = [];
  let x = 0, y = 0;
  for (const e of edits) { ai.push(x); bi.push(y); if (e[0] !== "+") x++; if (e[0] !== "-") y++; }
  while (k < edits.length) {
    if (!change[k]) { k++; continue; }
    let start = Math.max(0, k - ctx), end = k;
    // Extend while another change is within 2*ctx lines of context.
    for (;;) {
      while (end < edits.length && change[end]) end++;
      let j = end;
      while (j < edits.length && !change[j] && j - end < 2 * ctx) j++;
      if (j < edits.length && change[j] && j - end < 2 * ctx) { end = j; continue; }
      end = Math.min(edits.length, end + ctx);
      break;
    }
    const rows = edits.slice(start, end);
    const an = rows.filter((e) => e[0] !== "+").length, bn = rows.filter((e) => e[0] !== "-").length;
    out.push({ a: ai[start] + (an ? 1 : 0), an, b: bi[start] + (bn ? 1 : 0), bn, rows });
    k = end;
  }
  return out;
}

function drawDiff() {
  const box = $("diff");
  box.textContent = "";
  const k = ui.stage, st = D.stages[k], prev = D.stages[k - 1];
  if (!prev) {
    $("diff-title").textContent = "Changes: none (the first stage)";
    box.appendChild(el("div", "note", "The IR straight out of lowering: each source statement becomes SSA instructions; local variables become block parameters. Pick a later stage to see what it changed."));
    return;
  }
  if (prev.kind !== st.kind) {
    $("diff-title").textContent = "Changes: a new form";
    box.appendChild(el("div", "note", st.name === "isel"
      ? "Instruction selection translates the IR into machine IR: RISC-V instructions over virtual registers (%v…), block arguments become copies. The middle pane shows the result; later stages diff against it."
      : "The assembly is written from the last stage's machine IR: labels numbered down the text, branches relaxed, directives added."));
    return;
  }
  // The chosen function first, then the other functions the stage changed.
  const funcs = [ui.func, ...[...new Set([...prev.map.keys(), ...st.map.keys()])].filter((f) => f !== ui.func)];
  let drawn = 0, changed = 0;
  for (const f of funcs) {
    const ta = prev.map.get(f), tb = st.map.get(f);
    if (ta === tb) continue;
    changed++;
    const a = ta === undefined ? [] : D.texts[ta][0].split("\n").slice(0, -1);
    const b = tb === undefined ? [] : D.texts[tb][0].split("\n").slice(0, -1);
    const ia = ta === undefined ? 0 : D.texts[ta][2], ib = tb === undefined ? 0 : D.texts[tb][2];
    const head = el("div", "d-func", "@" + D.funcs[f] + ": " + ia + " → " + ib + " instructions" +
      (ta === undefined ? " (new)" : tb === undefined ? " (removed)" : ""));
    head.dataset.func = f;
    box.appendChild(head);
    if (drawn > DIFF_LIMIT) { box.appendChild(el("div", "note", "(diff not drawn: the page draws " + DIFF_LIMIT + " lines per stage)")); continue; }
    const srcB = tb === undefined ? [] : D.texts[tb][1], srcA = ta === undefined ? [] : D.texts[ta][1];
    for (const h of hunks(diffLines(a, b))) {
      const hd = el("div", "l d-hunk", "@@ -" + h.a + "," + h.an + " +" + h.b + "," + h.bn + " @@");
      box.appendChild(hd);
      let x = h.a - (h.an ? 1 : 0), y = h.b - (h.bn ? 1 : 0);
      const frag = document.createDocumentFragment();
      for (const [op, line] of h.rows) {
        const r = el("div", "l" + (op === "-" ? " d-del" : op === "+" ? " d-add" : ""), (op === "=" ? " " : op) + " " + line);
        const s = op === "-" ? srcA[x] : srcB[y];
        if (s) {
          // Marked in the source line's colour; a click shows the line.
          r.title = "source line " + s + " (click to show it)";
          r.dataset.s = s;
          r.style.boxShadow = "inset 5px 0 " + strong(s);
        }
        if (op !== "+") x++;
        if (op !== "-") y++;
        frag.appendChild(r);
        drawn++;
      }
      box.appendChild(frag);
    }
  }
  const here = st.map.get(ui.func), before = prev.map.get(ui.func);
  const fi = (t) => t === undefined ? 0 : D.texts[t][2];
  $("diff-title").textContent = "Changes made by " + st.name + " (" + changed + " function" + (changed === 1 ? "" : "s") +
    "; @" + D.funcs[ui.func] + ": " + fi(before) + " → " + fi(here) + " instructions)";
  if (!changed) box.appendChild(el("div", "note", st.name + " changed nothing."));
}

// ---- graphs -------------------------------------------------------------

// Blocks and edges of a function's text: {names, starts, insts, succ: [[to, label]]}.
function parseCfg(kind, text) {
  const lines = text.split("\n");
  const blocks = [];
  const label = kind === "ir" ? /^(bb\d+)[(:]/ : kind === "mir" ? /^(bb\d+)( unplaced)?:$/ : /^(\.LBB\d+_\d+):$/;
  const target = kind === "asm" ? /\.LBB\d+_\d+/g : /\bbb\d+\b/g;
  lines.forEach((l, k) => {
    const m = label.exec(l);
    if (m) blocks.push({ name: m[1], start: k, insts: [], placed: !m[2] });
    else if (blocks.length && /^\s/.test(l) && !/^\t\./.test(l) && l.trim() && !/^\s*#/.test(l)) blocks[blocks.length - 1].insts.push(l.trim());
  });
  const index = new Map(blocks.map((b, k) => [b.name, k]));
  const succ = blocks.map((b, k) => {
    const out = [];
    const add = (name, lab) => { if (index.has(name) && !out.some((e) => e[0] === index.get(name))) out.push([index.get(name), lab]); };
    const last = b.insts[b.insts.length - 1] || "";
    if (kind === "ir") {
      const names = last.match(target) || [];
      const br = /^br /.test(last);
      names.forEach((n, j) => add(n, br ? (j === 0 ? "T" : "F") : ""));
    } else {
      let cond = false;
      for (const i of b.insts) {
        const names = i.match(target) || [];
        const isJump = /^j\s/.test(i);
        for (const n of names) add(n, isJump ? "" : "T");
        if (names.length && !isJump) cond = true;
      }
      const ends = /^(j|ret|tail|jr)\b/.test(last);
      if (!ends && b.placed && k + 1 < blocks.length && blocks[k + 1].placed) add(blocks[k + 1].name, cond ? "F" : "");
    }
    return out;
  });
  return { blocks, succ };
}

// Immediate dominators (Cooper, Harvey and Kennedy), -1 for unreachable blocks.
function dominators(n, succ) {
  const order = [], seen = new Uint8Array(n);
  const post = (r) => {
    const stack = [[r, 0]];
    seen[r] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (top[1] < succ[top[0]].length) {
        const s = succ[top[0]][top[1]++][0];
        if (!seen[s]) { seen[s] = 1; stack.push([s, 0]); }
      } else { order.push(top[0]); stack.pop(); }
    }
  };
  if (n) post(0);
  const rpo = order.reverse(), num = new Int32Array(n).fill(-1);
  rpo.forEach((b, k) => { num[b] = k; });
  const preds = Array.from({ length: n }, () => []);
  succ.forEach((ss, b) => ss.forEach(([s]) => preds[s].push(b)));
  const idom = new Int32Array(n).fill(-1);
  if (!n) return idom;
  idom[0] = 0;
  for (let changed = true; changed;) {
    changed = false;
    for (const b of rpo.slice(1)) {
      let d = -1;
      for (const p of preds[b]) {
        if (idom[p] < 0) continue;
        if (d < 0) { d = p; continue; }
        let x = p, y = d;
        while (x !== y) {
          while (num[x] > num[y]) x = idom[x];
          while (num[y] > num[x]) y = idom[y];
        }
        d = x;
      }
      if (d !== idom[b]) { idom[b] = d; changed = true; }
    }
  }
  return idom;
}

let measurer = null;
function textWidth(s) {
  if (!measurer) {
    measurer = document.createElement("canvas").getContext("2d");
    // The font of the graphs' labels (page.css: svg text).
    measurer.font = '11px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
  }
  return measurer.measureText(s).width;
}

// A layered drawing of a graph: nodes {lines, cls}, succ [[to, label]]. Layers by
// longest path over the edges that are not back edges (of a DFS from node 0),
// order by barycentres; an edge between adjacent layers is a curve through the
// gap between them, a longer one runs down a lane on the left, a back edge up a
// lane on the right, so that no edge crosses a box or an edge label.
function layered(nodes, succ, caption, prefix) {
  const n = nodes.length, LH = 14, PAD = 6, GAP = 46, HG = 22;
  const state = new Uint8Array(n), back = new Set(), post = [];
  const dfs = (r) => {
    const stack = [[r, 0]];
    state[r] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1], u = top[0];
      if (top[1] < succ[u].length) {
        const v = succ[u][top[1]++][0];
        if (state[v] === 1) back.add(u + ">" + v);
        else if (!state[v]) { state[v] = 1; stack.push([v, 0]); }
      } else { state[u] = 2; post.push(u); stack.pop(); }
    }
  };
  for (let r = 0; r < n; r++) if (!state[r]) dfs(r);
  const rpo = post.slice().reverse();
  const layer = new Int32Array(n);
  for (const u of rpo) for (const [v] of succ[u]) if (!back.has(u + ">" + v)) layer[v] = Math.max(layer[v], layer[u] + 1);
  const nl = n ? Math.max(...layer) + 1 : 0;
  const layers = Array.from({ length: nl }, () => []);
  for (const u of rpo) layers[layer[u]].push(u);
  const preds = Array.from({ length: n }, () => []);
  succ.forEach((ss, u) => ss.forEach(([v]) => { if (!back.has(u + ">" + v) && u !== v) preds[v].push(u); }));
  const pos = new Float64Array(n);
  const setPos = () => layers.forEach((ls) => ls.forEach((u, k) => { pos[u] = k; }));
  setPos();
  for (let sweep = 0; sweep < 4; sweep++) {
    const down = sweep % 2 === 0;
    const seq = down ? layers : layers.slice().reverse();
    for (const ls of seq) {
      const key = new Map(ls.map((u) => {
        const nb = down ? preds[u] : succ[u].map((e) => e[0]).filter((v) => !back.has(u + ">" + v) && v !== u);
        return [u, nb.length ? nb.reduce((s, v) => s + pos[v], 0) / nb.length : pos[u]];
      }));
      ls.sort((a, b) => key.get(a) - key.get(b) || pos[a] - pos[b]);
      ls.forEach((u, k) => { pos[u] = k; });
    }
  }
  // Sizes, then coordinates: each node as near the mean of its predecessors'
  // centres as the order allows.
  const w = nodes.map((nd) => Math.ceil(Math.max(...nd.lines.map(textWidth))) + 2 * PAD);
  const h = Math.max(1, ...nodes.map((nd) => nd.lines.length)) * LH + PAD;
  const x = new Float64Array(n), y = new Float64Array(n);
  let width = 0;
  layers.forEach((ls, L) => {
    let right = -Infinity;
    for (const u of ls) {
      const want = preds[u].length ? preds[u].reduce((s, v) => s + x[v] + w[v] / 2, 0) / preds[u].length - w[u] / 2 : 0;
      x[u] = Math.max(want, right + HG);
      if (right === -Infinity) x[u] = Math.max(want, 0);
      right = x[u] + w[u];
      y[u] = 28 + L * (h + GAP);
    }
    width = Math.max(width, right);
  });
  const longEdges = [], backEdges = [];
  succ.forEach((ss, u) => ss.forEach(([v]) => {
    if (back.has(u + ">" + v) || u === v) backEdges.push(u + ">" + v);
    else if (layer[v] > layer[u] + 1) longEdges.push(u + ">" + v);
  }));
  const LANE = 10;
  const left = 10 + longEdges.length * LANE;
  const svgW = left + width + 14 + backEdges.length * LANE + 10;
  const svgH = 28 + nl * (h + GAP);
  const NS = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, parent) => {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  const svg = mk("svg", { width: svgW, height: svgH, viewBox: "0 0 " + svgW + " " + svgH });
  const defs = mk("defs", {}, svg);
  for (const [id, color] of [["a", "#57606a"], ["b", "#cf222e"]]) {
    const m = mk("marker", { id: prefix + id, viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto" }, defs);
    mk("path", { d: "M0,0 L8,4 L0,8 z", fill: color }, m);
  }
  mk("text", { x: 4, y: 14, class: "cap" }, svg).textContent = caption;
  const X = (u) => left + x[u];
  // Edges first, boxes over them.
  const inIdx = new Map();
  let laneL = 0, laneR = 0;
  succ.forEach((ss, u) => ss.forEach(([v, lab], j) => {
    const key = u + ">" + v;
    const x1 = X(u) + w[u] * (j + 1) / (ss.length + 1), y1 = y[u] + h;
    const ins = inIdx.get(v) || 0;
    inIdx.set(v, ins + 1);
    const x2 = X(v) + w[v] / 2 + ((ins % 3) - 1) * 8, y2 = y[v];
    let d, cls = "edge";
    // Horizontal runs keep below the labels under the boxes (14 px) and above
    // the arrowheads.
    const ya = (k) => y1 + 15 + (k % 5) * 4, yb = (k) => y2 - 12 - (k % 5) * 4;
    if (back.has(key) || u === v) {
      const lx = left + width + 14 + laneR * LANE, k = laneR++;
      d = "M" + x1 + "," + y1 + " V" + ya(k) + " H" + lx + " V" + yb(k) + " H" + x2 + " V" + y2;
      cls += " back";
    } else if (layer[v] > layer[u] + 1) {
      const lx = left - 10 - laneL * LANE, k = laneL++;
      d = "M" + x1 + "," + y1 + " V" + ya(k) + " H" + lx + " V" + yb(k) + " H" + x2 + " V" + y2;
    } else {
      // Straight down out of the box past the labels (14 px), straight into the
      // next one, a curve between.
      const ys = y1 + 14, ye = y2 - 10, my = (ys + ye) / 2;
      d = "M" + x1 + "," + y1 + " V" + ys + " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," + ye + " V" + y2;
    }
    mk("path", { d, class: cls, "marker-end": "url(#" + prefix + (cls === "edge" ? "a" : "b") + ")" }, svg);
    if (lab) {
      // Beside the edge's start, on the side it does not turn to: every edge
      // leaves its box straight down for 14 px, so in that band under the boxes
      // the only strokes are those at the ports, which are further apart than a
      // label is wide.
      const right = x2 < x1 || back.has(key);
      mk("text", { x: right ? x1 + 3 : x1 - 3, y: y1 + 10, class: "elabel", "text-anchor": right ? "start" : "end" }, svg).textContent = lab;
    }
  }));
  nodes.forEach((nd, u) => {
    const g = mk("g", { "data-node": u }, svg);
    mk("rect", { x: X(u), y: y[u], width: w[u], height: h, rx: 3, class: "box" + (nd.cls ? " " + nd.cls : "") }, g);
    nd.lines.forEach((l, k) => {
      mk("text", { x: X(u) + PAD, y: y[u] + PAD / 2 + LH * (k + 1) - 3 }, g).textContent = l;
    });
    if (nd.title) mk("title", {}, g).textContent = nd.title;
  });
  return svg;
}

function drawGraphs() {
  const st = D.stages[ui.stage], t = textOf(ui.stage, ui.func);
  const cfgBox = $("cfg"), domBox = $("domtree");
  cfgBox.textContent = "";
  domBox.textContent = "";
  $("graph-title").textContent = "— @" + D.funcs[ui.func] + " after " + st.name;
  if (!t) { cfgBox.appendChild(el("div", "note", "No such function at this stage.")); return; }
  const g = parseCfg(st.kind, t[0]);
  const n = g.blocks.length;
  if (!n) { cfgBox.appendChild(el("div", "note", "No blocks.")); return; }
  if (n > GRAPH_LIMIT) { cfgBox.appendChild(el("div", "note", n + " blocks: too many to draw (the page draws up to " + GRAPH_LIMIT + ").")); return; }
  const idom = dominators(n, g.succ);
  const headers = new Set();
  g.succ.forEach((ss, u) => ss.forEach(([v]) => {
    // A back edge: its target dominates its source.
    for (let x = u; idom[x] >= 0; x = idom[x]) { if (x === v) { headers.add(v); break; } if (x === 0) break; }
  }));
  const nodes = g.blocks.map((b, k) => ({
    lines: [b.name + (headers.has(k) ? " (loop header)" : ""), b.insts.length + " instruction" + (b.insts.length === 1 ? "" : "s")],
    cls: idom[k] < 0 ? "dead" : headers.has(k) ? "loop" : "",
    title: b.insts.join("\n"),
  }));
  const cfg = layered(nodes, g.succ, "control-flow graph", "c");
  cfgBox.appendChild(cfg);
  const tree = g.blocks.map((_, k) => []);
  idom.forEach((d, k) => { if (d >= 0 && d !== k) tree[d].push([k, ""]); });
  const reach = [];
  idom.forEach((d, k) => { if (d >= 0) reach.push(k); });
  const renum = new Map(reach.map((k, j) => [k, j]));
  const tnodes = reach.map((k) => ({ lines: [g.blocks[k].name], cls: headers.has(k) ? "loop" : "" }));
  const tsucc = reach.map((k) => tree[k].map(([c]) => [renum.get(c), ""]));
  const dom = layered(tnodes, tsucc, "dominator tree", "d");
  domBox.appendChild(dom);
  // Side by side when both fit, else the tree below the CFG; a graph wider than
  // the box shrinks to fit, down to 70%, and scrolls beyond.
  const room = $("graphs").clientWidth - 30;
  const both = +cfg.getAttribute("width") + +dom.getAttribute("width") + 20;
  const widest = Math.max(+cfg.getAttribute("width"), +dom.getAttribute("width"));
  const scale = Math.max(0.7, Math.min(1, room / (both <= room / 0.85 ? both : widest)));
  for (const svg of [cfg, dom]) {
    for (const a of ["width", "height"]) svg.setAttribute(a, (+svg.getAttribute(a) * scale).toFixed(1));
  }
  // Clicking a block shows it in the middle pane.
  cfg.addEventListener("click", (e) => {
    const gEl = e.target.closest("g[data-node]");
    if (!gEl) return;
    const b = g.blocks[+gEl.dataset.node];
    const mid = $("mid"), row = mid.querySelectorAll(".l")[b.start];
    if (row) mid.scrollTop = row.offsetTop - mid.offsetTop - 10;
  });
}

// ---- start --------------------------------------------------------------

function start() {
  $("slider").max = D.stages.length - 1;
  $("slider").oninput = () => select(+$("slider").value);
  $("prev").onclick = () => select(ui.stage - 1);
  $("next").onclick = () => select(ui.stage + 1);
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowLeft") select(ui.stage - 1);
    if (e.key === "ArrowRight") select(ui.stage + 1);
  });
  const first = D.funcs.indexOf(D.start || "main");
  ui.func = first >= 0 ? first : Math.max(0, D.funcs.indexOf("main"));
  ui.stage = Math.max(0, lastOfKind("ir"));
  if (!SELFTEST) loadView();
  drawFuncs();
  drawStageList();
  drawAll();
  if (ui.pinned) for (const id of ["src", "mid", "asm"]) reveal($(id), ui.pinned);
}

load().then(start).then(() => {
  if (SELFTEST) selftest();
}).catch((e) => {
  document.body.appendChild(el("pre", "", "The page's data could not be read: " + e));
  throw e;
});

// ---- self-test (page.html#selftest; the test suite runs it in Chromium) --

function selftest() {
  const fails = [];
  const check = (ok, what) => { if (!ok) fails.push(what); };
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  // A stage of the IR that changed the chosen function, with the longest diff.
  let best = -1, bestSize = -1;
  D.stages.forEach((st, k) => {
    const prev = D.stages[k - 1];
    if (!prev || st.kind !== "ir" || prev.kind !== "ir") return;
    const a = prev.map.get(ui.func), b = st.map.get(ui.func);
    if (a === undefined || b === undefined || a === b) return;
    const size = diffLines(D.texts[a][0].split("\n"), D.texts[b][0].split("\n")).filter((e) => e[0] !== "=").length;
    if (size > bestSize && size < 60) { best = k; bestSize = size; }
  });
  if (best >= 0) select(best);
  // Layout: the regions do not overlap and fit the window.
  const regions = ["stages", "diff-box", "graph-box", ...[...document.querySelectorAll(".pane")].map((p, k) => (p.id = p.id || "pane" + k))];
  const rects = regions.map((id) => [id, $(id).getBoundingClientRect()]);
  for (let i = 0; i < rects.length; i++) {
    check(rects[i][1].right <= innerWidth + 1 && rects[i][1].width > 100, rects[i][0] + " fits the window");
    for (let j = i + 1; j < rects.length; j++) check(!overlap(rects[i][1], rects[j][1]), rects[i][0] + " overlaps " + rects[j][0]);
  }
  // Line numbers sit on the row of their code, and a row is one line high.
  for (const id of ["src", "mid", "asm"]) {
    const rows = [...$(id).querySelectorAll(".l")].slice(0, 60);
    check(rows.length > 0, id + " has rows");
    for (const r of rows) {
      const n = r.querySelector(".n"), code = n.nextSibling;
      const rr = r.getBoundingClientRect(), nr = n.getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(code);
      const cr = range.getClientRects()[0];
      check(rr.height < 24, id + " row " + n.textContent + " is one line (" + rr.height + "px)");
      check(Math.abs(nr.top - rr.top) < 3 && (!cr || Math.abs(cr.top - nr.top) < 4), id + " line number " + n.textContent + " on its code's row");
      check(n.scrollWidth <= n.clientWidth + 0.5 && (!cr || nr.right <= cr.left + 0.5), id + " line number " + n.textContent + " fits its column");
    }
  }
  // The graph's boxes do not overlap and hold their labels.
  for (const svg of document.querySelectorAll("#graphs svg")) {
    const boxes = [...svg.querySelectorAll("g[data-node]")];
    const br = boxes.map((g) => g.querySelector("rect").getBoundingClientRect());
    boxes.forEach((g, k) => {
      for (const t of g.querySelectorAll("text")) {
        const tr = t.getBoundingClientRect();
        check(tr.left >= br[k].left - 0.5 && tr.right <= br[k].right + 0.5 && tr.top >= br[k].top - 0.5 && tr.bottom <= br[k].bottom + 0.5, "label " + t.textContent + " inside its box");
      }
      for (let j = 0; j < k; j++) check(!overlap(br[j], br[k]), "boxes " + j + " and " + k + " overlap");
    });
    const paths = [...svg.querySelectorAll("path.edge")];
    // No edge runs through a box (its ends touch their boxes' borders).
    const rects = [...svg.querySelectorAll("g[data-node] rect")].map((r) => r.getBBox());
    for (const p of paths) {
      const len = p.getTotalLength();
      for (let at = 3; at < len - 3; at += 4) {
        const q = p.getPointAtLength(at);
        const hit = rects.findIndex((r) => q.x > r.x + 1 && q.x < r.x + r.width - 1 && q.y > r.y + 1 && q.y < r.y + r.height - 1);
        check(hit < 0, "an edge runs through box " + hit + " at " + q.x.toFixed(0) + "," + q.y.toFixed(0));
        if (hit >= 0) break;
      }
    }
    for (const lab of svg.querySelectorAll(".elabel")) {
      const lr = lab.getBoundingClientRect();
      br.forEach((b, k) => check(!overlap(lr, b), "edge label overlaps box " + k));
      // No edge's stroke passes through the label's box.
      const bb = lab.getBBox(), pt = svg.createSVGPoint();
      for (let i = 1; i < 4; i++) for (let j = 1; j < 4; j++) {
        pt.x = bb.x + bb.width * i / 4; pt.y = bb.y + bb.height * j / 4;
        check(!paths.some((p) => p.isPointInStroke(pt)), "an edge crosses the label " + lab.textContent + " at " + pt.x.toFixed(0) + "," + pt.y.toFixed(0));
      }
    }
  }
  check(document.querySelectorAll("#graphs svg").length === 2, "a CFG and a dominator tree are drawn");
  // The graphs read every form: at every stage, each block of the function that
  // does not return has a successor.
  D.stages.forEach((st, k) => {
    const t = textOf(k, ui.func);
    if (!t) return;
    const g = parseCfg(st.kind, t[0]);
    check(g.blocks.length > 0, st.name + ": blocks found");
    const idom = dominators(g.blocks.length, g.succ);
    g.blocks.forEach((b, j) => {
      const last = b.insts[b.insts.length - 1] || "";
      if (!/^(ret|tail)\b/.test(last)) check(g.succ[j].length > 0, st.name + ": block " + b.name + " (" + last + ") has a successor");
      // In the assembly every label is reached (peephole removed the rest).
      if (st.kind === "asm") check(idom[j] >= 0, "assembly: " + b.name + " is reachable");
    });
  });
  // The diff: hunks whose lines are those of the texts, removed before added.
  const st = D.stages[ui.stage], prev = D.stages[ui.stage - 1];
  const drows = [...$("diff").children];
  if (best >= 0) check(drows.some((r) => r.classList.contains("d-del")) || drows.some((r) => r.classList.contains("d-add")), "the diff shows changes");
  for (let k = 1; k < drows.length; k++) check(!(drows[k - 1].classList.contains("d-add") && drows[k].classList.contains("d-del")), "an added line before a removed one");
  if (best >= 0) {
    const a = D.texts[prev.map.get(ui.func)][0].split("\n"), b = D.texts[st.map.get(ui.func)][0].split("\n");
    let ha = null;
    for (const r of drows) {
      if (r.classList.contains("d-func")) { ha = +r.dataset.func === ui.func ? { x: 0, y: 0 } : null; continue; }
      if (!ha) continue;
      if (r.classList.contains("d-hunk")) {
        const m = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(r.textContent);
        check(!!m, "hunk header " + r.textContent);
        ha.x = +m[1] - (+m[2] ? 1 : 0); ha.y = +m[3] - (+m[4] ? 1 : 0);
        continue;
      }
      const op = r.textContent[0], line = r.textContent.slice(2);
      if (op !== "+") { check(a[ha.x] === line, "diff line " + JSON.stringify(line) + " is line " + (ha.x + 1) + " before"); ha.x++; }
      if (op !== "-") { check(b[ha.y] === line, "diff line " + JSON.stringify(line) + " is line " + (ha.y + 1) + " after"); ha.y++; }
    }
  }
  // Click a source line that has both IR and assembly: its rows light up in
  // all three panes, in one colour, and nothing else does.
  const src = $("src"), mid = $("mid"), asm = $("asm");
  const lines = [...src.rowsBy.keys()].filter((s) => mid.rowsBy.has(s) && asm.rowsBy.has(s));
  check(lines.length > 0, "a source line with IR and assembly");
  // The line with the most IR and assembly rows.
  lines.sort((p, q) => (mid.rowsBy.get(q).length + asm.rowsBy.get(q).length) - (mid.rowsBy.get(p).length + asm.rowsBy.get(p).length) || p - q);
  const L = lines[0];
  // The report, one item a line: "stage NAME changed|same", "shown STAGE FUNC
  // LINE", then the highlighted rows as "ir TEXT" and "asm TEXT".
  const report = D.stages.map((s) => "stage " + s.name + " " + (s.changed ? "changed" : "same"));
  report.push("shown " + st.name + " " + D.funcs[ui.func] + " " + L);
  if (L) {
    src.rowsBy.get(L)[0].click();
    const hl = (box) => [...box.querySelectorAll(".l.hl")];
    const colour = getComputedStyle(src.rowsBy.get(L)[0]).backgroundColor;
    for (const [id, box] of [["source", src], ["IR", mid], ["assembly", asm]]) {
      const h = hl(box);
      check(h.length > 0 && h.length === box.rowsBy.get(L).length, id + " rows of line " + L + " highlighted");
      check(h.every((r) => +r.dataset.s === L), id + " highlights only line " + L);
      check(h.every((r) => getComputedStyle(r).backgroundColor === colour), id + " rows in the source line's colour");
    }
    for (const r of hl(mid)) report.push("ir " + r.lastChild.textContent);
    for (const r of hl(asm)) report.push("asm " + r.lastChild.textContent);
    // And back: clicking an assembly row of another line lights its source line.
    const other = [...asm.rowsBy.keys()].find((s) => s !== L && src.rowsBy.has(s));
    if (other) {
      asm.rowsBy.get(other)[0].click();
      check(src.rowsBy.get(other)[0].classList.contains("hl") && !src.rowsBy.get(L)[0].classList.contains("hl"), "an assembly click lights its source line");
      // A diff row too.
      const drow = [...$("diff").querySelectorAll(".l[data-s]")].find((r) => +r.dataset.s !== other);
      if (drow) {
        drow.click();
        const hs = [...src.querySelectorAll(".l.hl")];
        check(hs.length === 1 && hs[0].dataset.s === drow.dataset.s, "a diff click lights its source line");
      }
      src.rowsBy.get(L)[0].click();
    }
    reveal(src, L);
  }
  const out = el("pre", "", (fails.length ? "FAIL\n" + fails.join("\n") : "PASS") + "\n");
  out.id = "selftest-result";
  const rep = el("pre", "", report.join("\n") + "\n");
  rep.id = "selftest-report";
  rep.style.display = "none";
  document.body.append(out, rep);
}
