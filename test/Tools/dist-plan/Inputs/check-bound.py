"""Reads dist-plan --format json from stdin and prints whether the plan's
cost is at least its lower bound and every byte count is a sane
non-negative number (what overflowing 64-bit byte arithmetic used to
break)."""
import json
import sys

plan = json.load(sys.stdin)
ok = plan["cost"] >= plan["lower_bound"] * (1 - 1e-12)
ok &= plan["peak_bytes"] >= 0
for step in plan["steps"]:
    ok &= step["bytes"] >= 0 and step["recv_bytes"] >= 0 and step["cost"] >= 0
print("cost >= lower_bound" if ok else f"BROKEN: {json.dumps(plan)}")
