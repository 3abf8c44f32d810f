"""Checks a dist-calibrate file's redistribute fits (semantics §8): each
axis's redistribute parameters are the means of its even and its uneven
exchange's, and both exchanges were timed at every size of the sweep.
Prints one line per axis for FileCheck."""
import json
import sys

topology = json.load(open(sys.argv[1]))
calibration = topology["calibration"]
for fit in calibration["fits"]:
    if fit["op"] != "redistribute":
        continue
    exchanges = {e["pattern"]: e for e in fit["exchanges"]}
    written = topology["axes"][fit["axis"]]["ops"]["redistribute"]
    for key in ("alpha", "beta"):
        mean = (exchanges["even"][key] + exchanges["uneven"][key]) / 2
        if abs(written[key] - mean) > 1e-9 * max(abs(mean), 1e-30):
            sys.exit("axis %s: redistribute %s %g is not the mean %g"
                     % (fit["axis"], key, written[key], mean))
    sizes = {len(e["seconds"]) for e in exchanges.values()}
    if sizes != {len(calibration["bytes"])}:
        sys.exit("axis %s: the exchanges were not timed at every size"
                 % fit["axis"])
    print("axis %s: redistribute = mean of %s, %d sizes each"
          % (fit["axis"], " and ".join(sorted(exchanges)), sizes.pop()))
