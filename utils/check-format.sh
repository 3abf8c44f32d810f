#!/usr/bin/env bash
# Checks that the C++ sources follow .clang-format (LLVM style): prints each
# file clang-format-22 would change, with its first differences, and exits 1
# if there is one. `--fix` rewrites them instead. The files are git's (a
# checkout) or, outside one, every *.cpp, *.h, *.c and *.cu under the root.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
format=${CLANG_FORMAT:-clang-format-22}
command -v "$format" >/dev/null || { echo "check-format.sh: $format not found (utils/setup.sh installs it)" >&2; exit 2; }
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' '*.cu')
else
  mapfile -t files < <(find include lib tools test python utils -type f \
    \( -name '*.cpp' -o -name '*.h' -o -name '*.c' -o -name '*.cu' \) | sort)
fi
if [ "${1-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$format" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check-format.sh: $f is not formatted (utils/check-format.sh --fix):"
    "$format" "$f" | diff -u "$f" - | sed -n '3,12p'
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "check-format.sh: ${#files[@]} files formatted"
exit "$bad"
