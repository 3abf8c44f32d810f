#!/usr/bin/env bash
# The peers dist is measured against (torch eager, jax.jit) come from the
# frameworks' virtual environment: utils/setup-frontends.sh creates it (once)
# and prints its python. Never needed by the build or the suite.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../setup-frontends.sh"
