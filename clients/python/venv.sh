#!/usr/bin/env bash
# Installs the Python client with its test tools into clients/python/.venv (git-ignored), from the
# package indexes pip is set up with: what CI and test/clients/client-python.e2e-spec.ts run its tests with.
# Run again after a change: the package is reinstalled, its dependencies kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "the Python client needs Python 3.10 or newer, not " + sys.version.split()[0])'
if [ ! -x "$here/.venv/bin/python" ]; then
  "$python" -m venv "$here/.venv"
fi
# No retries (pip's build step too): an index this machine cannot reach answers at once instead of after
# pip's back-off, and the indexes it does reach serve every package.
export PIP_RETRIES=0 PIP_DISABLE_PIP_VERSION_CHECK=1
"$here/.venv/bin/python" -m pip install --quiet "$here[test]" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
