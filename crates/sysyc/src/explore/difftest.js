// Checks the page's line diff (page.js's diffLines and hunks, which the test
// `explore::tests::the_page_diff_is_a_minimal_unified_diff` puts before this) on
// random edits: the edits replay both texts, removed lines come before added
// ones, every hunk's lines are the texts' lines at the positions its header
// says, the hunks hold every change, and the common lines are a longest common
// subsequence. Prints "bad N".
let seed=12345;
function random(){seed=(seed*1103515245+12345)%2147483648;return seed/2147483648;}
function rnd(n){return Math.floor(random()*n);}
let bad=0;
for(let t=0;t<3000;t++){
  const a=[];const n=rnd(30);for(let i=0;i<n;i++)a.push("l"+rnd(6));
  const b=a.slice();const m=rnd(6);
  for(let i=0;i<m;i++){const op=rnd(3),p=rnd(b.length+1);if(op==0)b.splice(p,0,"n"+rnd(6));else if(op==1)b.splice(p,1);else b[p]="x"+rnd(3);}
  const e=diffLines(a,b);
  const A=e.filter(x=>x[0]!=="+").map(x=>x[1]), B=e.filter(x=>x[0]!=="-").map(x=>x[1]);
  if(JSON.stringify(A)!==JSON.stringify(a)||JSON.stringify(B)!==JSON.stringify(b)){bad++;console.log("replay",a,b,e);break;}
  for(let k=1;k<e.length;k++) if(e[k-1][0]==="+"&&e[k][0]==="-"){bad++;console.log("order");break;}
  // hunks: replay each hunk at its position
  for(const h of hunks(e)){
    let x=h.a-(h.an?1:0),y=h.b-(h.bn?1:0);
    for(const [op,l] of h.rows){ if(op!=="+"){if(a[x]!==l){bad++;console.log("hunk a",h,a);} x++;} if(op!=="-"){if(b[y]!==l){bad++;console.log("hunk b");} y++;} }
  }
  const ch=e.filter(x=>x[0]!=="=").length, inH=hunks(e).reduce((s,h)=>s+h.rows.filter(x=>x[0]!=="=").length,0);
  if(ch!==inH){bad++;console.log("coverage",ch,inH);break;}
  // LCS optimality vs DP
  const L=Array.from({length:a.length+1},()=>new Array(b.length+1).fill(0));
  for(let i=a.length-1;i>=0;i--)for(let j=b.length-1;j>=0;j--)L[i][j]=a[i]===b[j]?L[i+1][j+1]+1:Math.max(L[i+1][j],L[i][j+1]);
  if(e.filter(x=>x[0]==="=").length!==L[0][0]){bad++;console.log("not minimal");break;}
}
console.log("bad",bad);
