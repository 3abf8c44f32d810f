"""Checks a dist-calibrate file's device roofline (semantics §3b "device",
§8): mem_bw is the contiguous copies' bytes read and written per second
(2 / local.beta), and flops is the matrix products' rate, within 2x of what
the largest product timed reached (the fit's intercept takes the call's
fixed cost out, so it may be somewhat above). Prints one line for
FileCheck."""
import json
import sys

topology = json.load(open(sys.argv[1]))
device = topology["device"]
local_beta = topology["local"]["beta"]
if abs(device["mem_bw"] * local_beta - 2) > 1e-9:
    sys.exit("mem_bw %g is not 2 / local.beta (%g)" % (device["mem_bw"], local_beta))
compute = topology["calibration"]["device_compute"]
orders, seconds = compute["orders"], compute["seconds"]
if len(orders) != len(seconds) or len(orders) < 3:
    sys.exit("device_compute: %d orders, %d times" % (len(orders), len(seconds)))
if any(b != 2 * a for a, b in zip(orders, orders[1:])):
    sys.exit("device_compute: the orders %s do not double" % orders)
n = orders[-1]
reached = 2.0 * n ** 3 / seconds[-1]
if not reached / 2 <= device["flops"] <= 2 * reached:
    sys.exit("flops %g is not within 2x of the largest product's %g"
             % (device["flops"], reached))
print("device: flops from %d products of order %d to %d, mem_bw = 2 / local.beta"
      % (len(orders), orders[0], n))
