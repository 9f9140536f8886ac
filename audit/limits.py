"""What the audit rows hold that callers must check before they write."""

# An agent's session id is stored with each event it causes; the engine checks it (and a
# project name) against this length before any write (memories/core/limits.py).
SESSION_ID_CHARS = 200
