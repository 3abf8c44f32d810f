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
echo "What the hardening work measures: the whole test suite under"
echo "AddressSanitizer and UndefinedBehaviorSanitizer, and libFuzzer on every reader"
echo "of outside input."
echo
if [ "$log" != "-" ] && [ -f "$log" ]; then
  line=$(grep -E '^lit: ' "$log" | tail -n 1)
  minutes=$(( (seconds + 30) / 60 ))
  echo "\`utils/check.sh --sanitize\` — clang-22, ASan+UBSan on every C and C++ file"
  echo "of the project (dialect, passes, planner, runtime, tools, Python extension),"
  echo "Debian's \`libMLIR.so\` linked uninstrumented, a separate build folder"
  echo "(\`build-sanitize/\`), LeakSanitizer on except in MPI processes (Open MPI's"
  echo "unloaded plugins leak): **${line:-no summary line}**, in $minutes min on this"
  echo "machine (its build included: incremental here, from scratch on a fresh"
  echo "machine). CI (\`.ci/run\`) runs it after the plain \`utils/check.sh\`: both fit"
  echo "the 90-minute limit on 2 cores."
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
