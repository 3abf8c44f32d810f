#!/bin/sh
# A C compiler that logs each call (one line to $DIST_RUN_CC_LOG), then
# links with the system's cc: compile-once.test counts the links of a job.
echo "$*" >> "$DIST_RUN_CC_LOG"
exec cc "$@"
