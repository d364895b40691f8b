#!/usr/bin/env bash
# Formats every C, C++ and CUDA source in the repository with clang-format and the
# style in .clang-format.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list the files that differ, exit 1 if any
# Exits 77 (a skipped test) where clang-format is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$fmt" ]; then
  echo "clang-format is not installed (apt-get install clang-format)" >&2
  exit 77
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.c' '*.cpp' '*.h' '*.cu' '*.cuh' 2>/dev/null || find app engine tests fuzz bench -name '*.[ch]' -o -name '*.cpp' -o -name '*.cu')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "not formatted (run scripts/format.sh): ${bad[*]}" >&2
    exit 1
  fi
  echo "all ${#files[@]} sources formatted"
  exit 0
fi
"$fmt" -i "${files[@]}"
