#!/usr/bin/env bash
# Creates (once) the virtual environment of the frameworks: torch, torch-mlir,
# transformers, jax and IREE's compiler (the JAX front door's StableHLO to
# linalg), pinned in utils/frontends/requirements.txt, from Debian's
# /usr/bin/python3 (the interpreter dist's Python package is built for, so the
# environment imports both). Prints the environment's python.
#
#   utils/setup-frontends.sh            # build/frontends-venv
#
# DIST_FRONTENDS_VENV chooses the folder. Needs the Python package index;
# when it cannot be reached the script says so and exits 3 (the front-door
# tests then report themselves skipped, with that message).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
requirements="$root/utils/frontends/requirements.txt"
venv=${DIST_FRONTENDS_VENV:-$root/build/frontends-venv}
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv" >&2
fi
if ! cmp -s "$requirements" "$stamp"; then
  if ! "$venv/bin/python" -m pip install --quiet -r "$requirements" >&2; then
    echo "setup-frontends.sh: installing $requirements failed (is the Python" \
      "package index reachable, and is there room for about 8 GB in $venv?)" >&2
    exit 3
  fi
  cp "$requirements" "$stamp"
fi
echo "$venv/bin/python"
