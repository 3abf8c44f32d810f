#!/usr/bin/env bash
# Prints the "Reliability" section of docs/benchmarks.md: the sanitized test
# run (from the log of `utils/check.sh --sanitize` and its wall time) and the
# fuzzing table that utils/fuzz.sh wrote to docs/fuzzing.md.
#
#   utils/bench/reliability.sh SANITIZE_LOG SECONDS    # after a sanitized run
#   utils/bench/reliability.sh - 0                     # none this time
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
log=$1 seconds=$2

echo "## Reliability"
echo
echo "What the hardening work of issue 16 measures: the whole test suite under"
echo "AddressSanitizer and UndefinedBehaviorSanitizer, and libFuzzer on every reader"
echo "of outside input."
echo
if [ "$log" != "-" ] && [ -f "$log" ]; then
  line=$(grep -E '^lit: ' "$log" | tail -n 1)
  minutes=$(( (seconds + 30) / 60 ))
  echo "\`utils/check.sh --sanitize\` — clang-22, ASan+UBSan on every C and C++ file"
  echo "of the project (dialect, passes, planner, runtime, tools, Python extension),"
  echo "Debian's \`libMLIR.so\` linked uninstrumented, a separate build folder"
  echo "(\`build-sanitize/\`), LeakSanitizer on: **${line:-no summary line}**, in"
  echo "$minutes min on this machine (build from scratch and tests). CI runs the plain"
  echo "\`utils/check.sh\` only: on its 2 cores the sanitized run would not fit next to"
  echo "the plain one within the 90-minute limit, so it is reported here."
else
  echo "The sanitized run was not part of this benchmark run (\`utils/bench.sh --quick\`"
  echo "or \`--no-sanitize\`); \`utils/check.sh --sanitize\` runs it."
fi
echo
if [ -f "$root/docs/fuzzing.md" ]; then
  echo "Fuzzing, from [fuzzing.md](fuzzing.md) (\`utils/fuzz.sh\`; its own date and"
  echo "command there):"
  echo
  sed -n '/^| harness/,/^$/p' "$root/docs/fuzzing.md"
else
  echo "No fuzzing results yet: run \`utils/fuzz.sh\`."
fi
