#!/bin/sh
# Stand-in for sysyc while the real compiler is being built, so the bench
# pipeline can be exercised end to end. Same CLI contract:
#   standin-sysyc.sh -S -o OUT.s IN.sy [-O0|-O1|-O2]
# It compiles the SysY file as C with `riscv64-linux-gnu-gcc -S -O0`: through
# `$SYSY_BENCH_BIN to-c` when that variable names the bench binary, else with a
# prelude via -include (and C++ when C rejects the file).
set -eu
out=""
src=""
while [ $# -gt 0 ]; do
    case "$1" in
        -S) ;;
        -o) out="$2"; shift ;;
        -O*) ;;
        *) src="$1" ;;
    esac
    shift
done
if [ -z "$out" ] || [ -z "$src" ]; then
    echo "usage: $0 -S -o OUT.s IN.sy [-O LEVEL]" >&2
    exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/prelude.h" <<'EOF'
#ifdef __cplusplus
extern "C" {
#endif
int getint(void); int getch(void); float getfloat(void);
int getarray(int a[]); int getfarray(float a[]);
void putint(int a); void putch(int a); void putfloat(float a);
void putarray(int n, int a[]); void putfarray(int n, float a[]);
void putf(const char fmt[], ...);
void _sysy_starttime(int lineno); void _sysy_stoptime(int lineno);
#ifdef __cplusplus
}
#endif
#define starttime() _sysy_starttime(__LINE__)
#define stoptime() _sysy_stoptime(__LINE__)
EOF
cc="${SYSY_CC:-riscv64-linux-gnu-gcc}"
flags="-S -O0 -march=rv64gc -mabi=lp64d -w -ffp-contract=off -fsingle-precision-constant"
if [ -n "${SYSY_BENCH_BIN:-}" ]; then
    # `bench to-c` rewrites scalar `const int`s (which may size file-scope
    # arrays in SysY but not in C) into enumerators and prepends the prelude.
    "$SYSY_BENCH_BIN" to-c "$src" > "$dir/source.c"
    # shellcheck disable=SC2086
    "$cc" $flags -x c "$dir/source.c" -o "$out"
    exit 0
fi
# shellcheck disable=SC2086
"$cc" $flags -include "$dir/prelude.h" -x c "$src" -o "$out" 2>/dev/null ||
    "$cc" $flags -fpermissive -include "$dir/prelude.h" -x c++ "$src" -o "$out"
