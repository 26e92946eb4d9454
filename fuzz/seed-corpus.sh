#!/usr/bin/env bash
# Seeds the fuzz corpora from the test suites (run from anywhere; corpora are not
# committed). front: every .sy of the project and of ../shared/sysy2022 (when
# present). ir: every .ir test file, plus the IR that `sysyc --emit ir` prints for
# the project's and the functional suite's programs at -O0 and -O2.
set -euo pipefail
fuzz=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$fuzz")
suite=${SYSY_SUITE:-$repo/../shared/sysy2022}
mkdir -p "$fuzz/corpus/front" "$fuzz/corpus/ir"

sy_files() {
  find "$repo/tests/programs" -name '*.sy'
  [ -d "$suite" ] && find "$suite" -name '*.sy'
  return 0
}

# libFuzzer names corpus files by content hash; copying under the same scheme
# keeps re-seeding idempotent.
add() { cp "$1" "$2/$(sha1sum <"$1" | cut -c1-40)"; }

while read -r f; do add "$f" "$fuzz/corpus/front"; done < <(sy_files)
while read -r f; do add "$f" "$fuzz/corpus/ir"; done \
  < <(find "$repo/crates" "$repo/tests" -name '*.ir')

(cd "$repo" && cargo build --release -q -p sysyc)
sysyc=$repo/target/release/sysyc
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
while read -r f; do
  case $f in */performance/*) continue ;; esac
  for o in -O0 -O2; do
    if timeout 20 "$sysyc" "$o" --emit ir -o "$tmp" "$f" 2>/dev/null; then
      add "$tmp" "$fuzz/corpus/ir"
    fi
  done
done < <(sy_files)
echo "front: $(ls "$fuzz/corpus/front" | wc -l) files, ir: $(ls "$fuzz/corpus/ir" | wc -l) files"
