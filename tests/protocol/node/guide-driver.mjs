// Drives the guide's Node client (fixtures/echoMemory.mjs, verbatim) against a live server
// and prints one JSON summary on stdout for tests/protocol/test_guide_clients.py to check.
//
// It watches the client from outside by wrapping fetch: which sessions it opened and how
// many requests were in flight at once. The client itself is not changed.
const seenSessions = new Set();
let inFlight = 0;
let maxInFlight = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  inFlight += 1;
  maxInFlight = Math.max(maxInFlight, inFlight);
  try {
    const res = await realFetch(url, init);
    const id = res.headers.get("mcp-session-id");
    if (id) seenSessions.add(id);
    return res;
  } finally {
    inFlight -= 1;
  }
};

const { remember, recall, why } = await import("../fixtures/echoMemory.mjs");

function story(tag) {
  const cache = `${tag} cache`, outage = `${tag} outage`, release = `${tag} release`;
  return {
    entities: [cache, outage, release].map((name) => ({ name, type: "thing" })),
    facts: [
      { source: outage, target: cache, relation_type: "caused_by_cache",
        fact: `The ${tag} outage was caused by the ${tag} cache filling up.`,
        confidence: "extracted", causal_hint: "caused_by" },
      { source: release, target: cache, relation_type: "shrank",
        fact: `The ${tag} release shrank the ${tag} cache.`,
        confidence: "extracted", causal_hint: "led_to" },
    ],
  };
}

const summary = {};

// 1. remember / recall / why, the guide's round trip.
const s = story("Nodejs");
const stored = await remember("node-driver", s.entities, s.facts);
const recalled = await recall("why did the Nodejs outage happen", 3);
const traced = await why("Nodejs outage", "upstream");
summary.roundTrip = {
  stored: stored.stored,
  edgesCreated: stored.edges_created.length,
  topFact: recalled.facts[0]?.fact,
  chain: traced.causes[0]?.map((f) => f.fact),
};

// 2. Concurrency through the pool: 16 writes, then 16 traces, each batch at once.
const tags = Array.from({ length: 16 }, (_, i) => `Pool${String(i).padStart(2, "0")}`);
const writes = await Promise.all(tags.map((t) => remember(`pool-${t}`, story(t).entities,
                                                          story(t).facts)));
maxInFlight = 0;
const traces = await Promise.all(tags.map((t) => why(`${t} outage`, "upstream")));
summary.concurrency = {
  allStored: writes.every((w) => w.stored === true),
  answers: traces.map((t) => ({ subject: t.subject, cause: t.causes[0]?.[0]?.cause })),
  maxInFlight,
  sessionsOpened: seenSessions.size,
};

// 3. The server ends every session (as an expiry or a DELETE would); then keep calling.
const ended = [];
for (const id of seenSessions) {
  const res = await realFetch(process.env.ECHO_MEM_ENDPOINT, {
    method: "DELETE",
    headers: { Authorization: `Bearer ${process.env.ECHO_MEM_API_KEY}`, "Mcp-Session-Id": id },
  });
  ended.push(res.status);
}
const before = seenSessions.size;
const attempts = [];
for (let i = 0; i < 8; i += 1) {
  try {
    const out = await recall("Nodejs cache", 1);
    attempts.push({ ok: true, count: out.count });
  } catch (e) {
    attempts.push({ ok: false, error: String(e.message).slice(0, 40) });
  }
}
summary.reconnect = { ended, attempts, newSessions: seenSessions.size - before };

console.log(JSON.stringify(summary));
