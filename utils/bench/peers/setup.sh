#!/usr/bin/env bash
# Creates (once) the virtual environment of the peers dist is measured
# against: torch eager and jax.jit, pinned in requirements.txt. Built from
# Debian's /usr/bin/python3, the interpreter dist's own package is built
# for, so one interpreter runs both. Never needed by the build or the suite.
#
#   utils/bench/peers/setup.sh        # prints the environment's python
#
# DIST_PEERS_VENV chooses the folder (default: build/peers-venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
venv=${DIST_PEERS_VENV:-$root/build/peers-venv}
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv" >&2
fi
if ! cmp -s "$here/requirements.txt" "$stamp"; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet -r "$here/requirements.txt" >&2
  cp "$here/requirements.txt" "$stamp"
fi
echo "$venv/bin/python"
