"""What `initialize` tells an agent about using this server: read by a model, so plain and short."""

SERVER_INSTRUCTIONS = """\
Echo Memory is your persistent memory: a graph of entities and facts that you write \
and later recall, shared across sessions (scope "shared") or private to this key's \
holder and tool (scope "solo"). Every graph tool needs `scope`; use "shared" unless the \
user wants something kept private.

- Before answering from scratch, or asking the user to repeat something, call \
query_memory with a short natural-language query. Trust facts with a high `score`.
- When the user tells you something worth keeping (a decision, preference, owner, \
cause of a problem), call write_episode with the entities and facts you extracted. \
Check `stored`: if false, resolve `ambiguous_entities` via entity_resolutions and call \
again. Set causal_hint only when the conversation stated the cause.
- For "why did X happen" or "what did X lead to", call trace_cause rather than \
query_memory: it returns ordered chains of recorded causes, nearest first.
- When a recalled fact saved the user from re-explaining, call record_recall_save \
with its fact_id.
- To see who changed what and when, call get_audit_log. To see where a fact came \
from (which conversation, when, which agent), call get_episode with its episode_id.
- Only when the user asks you to forget or delete something (or to remove a secret), \
call forget with the ids: it erases them for good. To correct a fact, write it again.
- Coding agents also keep notes about a project (decisions, bugs, patterns): call \
memory_context at the start of a session and memory_search for the topic, \
memory_details for a note's full text, and memory_save before the session ends for every \
decision, fix or discovery (scope defaults to "shared" for these).
- If a write is refused for the monthly unit allowance, or a recall says the allowance \
cut it short, call get_usage and tell the user; retrying does not help until the month \
resets or the plan is upgraded.

Pass `memory` only to use a graph other than your key's default. Errors come back as \
tool results with isError true and say which argument to change.\
"""
