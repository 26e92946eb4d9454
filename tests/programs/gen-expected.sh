#!/usr/bin/env bash
# Regenerates the .out files of the project's own test programs with an independent
# oracle: the host C++ compiler (g++ -O0 with SysY's float rules) and a libc-based
# runtime. Run it after adding a program; review the diff before committing.
set -euo pipefail
# With a directory argument (e.g. tests/relations), its programs instead.
cd "${1:-$(dirname "$0")}"
hdr=$(mktemp --suffix=.h); exe=$(mktemp); trap 'rm -f "$hdr" "$exe"' EXIT
cat >"$hdr" <<'H'
#include <stdio.h>
static int getint(){int t=0; scanf("%d",&t); return t;}
static int getch(){char c=-1; scanf("%c",&c); return (int)c;}
static float getfloat(){float n=0; scanf("%a",&n); return n;}
static int getarray(int a[]){int n=0; scanf("%d",&n); for(int i=0;i<n;i++) scanf("%d",&a[i]); return n;}
static int getfarray(float a[]){int n=0; scanf("%d",&n); for(int i=0;i<n;i++) scanf("%a",&a[i]); return n;}
static void putint(int a){printf("%d",a);}
static void putch(int a){printf("%c",a);}
static void putfloat(float a){printf("%a",a);}
static void putarray(int n,int a[]){printf("%d:",n); for(int i=0;i<n;i++) printf(" %d",a[i]); printf("\n");}
static void putfarray(int n,float a[]){printf("%d:",n); for(int i=0;i<n;i++) printf(" %a",a[i]); printf("\n");}
#define putf printf
#define starttime()
#define stoptime()
H
for sy in *.sy; do
  name=${sy%.sy}
  g++ -x c++ -O0 -fwrapv -fpermissive -w -ffp-contract=off -fsingle-precision-constant \
      -include "$hdr" "$sy" -o "$exe"
  input=/dev/null; [ -f "$name.in" ] && input="$name.in"
  set +e; out=$("$exe" <"$input"; echo "@@$?"); set -e
  status=${out##*@@}; out=${out%@@*}
  { printf '%s' "$out"; [ -n "$out" ] && [ "${out: -1}" != $'\n' ] && echo; echo "$status"; } >"$name.out"
done
