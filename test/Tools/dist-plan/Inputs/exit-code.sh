#!/bin/sh
# Runs its arguments and prints their exit code (lit's internal shell has no
# $?), always succeeding itself so that FileCheck sees the output.
"$@"
echo "exit code: $?"
