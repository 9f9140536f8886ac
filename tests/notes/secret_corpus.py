"""Every kind of secret the redaction tests write, as an agent would write it.

The fake secrets are assembled from pieces so that no scanner mistakes this file for a
leak. Each entry: (kind, text as written, the part that must never be stored or shown;
None: the whole text).
"""

from __future__ import annotations

J = "".join

SECRETS = [
    ("openai-key", J(["sk-", "proj-", "A1b2C3d4E5f6G7h8I9j0K1l2"]), None),
    ("openai-key-plain", J(["sk-", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh"]), None),
    ("anthropic-key", J(["sk-", "ant-", "api03-", "Q" * 12, "w1E2r3T4y5"]), None),
    ("github-token", J(["gh", "p_", "a1B2c3D4" * 4, "e5F6"]), None),
    ("github-pat", J(["github", "_pat_", "11ABCDEFG0", "123456789_abcdefghij"]), None),
    ("aws-access-key", J(["AKIA", "IOSFODNN7", "EXAMPLE"]), None),
    ("aws-secret", J(["aws_secret_access_key=", "wJalrXUtnFEMI/K7MDENG/bPxR"]),
     "wJalrXUtnFEMI/K7MDENG/bPxR"),
    ("slack-token", J(["xo", "xb-", "1234567890-", "abcdefghijKL"]), None),
    ("stripe-secret", J(["sk", "_live_", "4eC39HqLyjWDarjtT1zdp7dc"]), None),
    ("stripe-restricted", J(["rk", "_test_", "51HqLyjWDarjtT1zdp7dcAB"]), None),
    ("google-api-key", J(["AI", "za", "SyD-1234567890abcdefghijklmnopqrstu"]), None),
    ("echo-memory-key", J(["em_", "0123456789ab", "_", "A" * 20, "b" * 23]), None),
    ("bearer", J(["Authorization: Bearer ", "eyJhbGciOiJIUzI1NiJ9.abc"]),
     "eyJhbGciOiJIUzI1NiJ9.abc"),
    ("url-password", "postgres://app:" + "s3cretPass" + "@db.internal/app", "s3cretPass"),
    ("password-assignment", "password=" + "hunter2hunter2", "hunter2hunter2"),
    ("json-secret", '"secret": "' + "xyzzy-plugh-42" + '"', "xyzzy-plugh-42"),
    ("env-api-key", "OPENAI_API_KEY=" + "abcd1234efgh5678", "abcd1234efgh5678"),
    ("marked", "<redacted>" + "4 Privet Drive" + "</redacted>", "4 Privet Drive"),
    ("private-key", J(["-----BEGIN ", "PRIVATE KEY-----", "MIIEvQ", "-----END PRIVATE KEY-----"]),
     "MIIEvQ"),
    ("custom", "ticket " + "ACME-" + "123456", "ACME-123456"),
]

# The kinds issue 37 found missed, each as it was written.
MISSED = [
    ("bare-jwt", J(["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".",
                    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ", ".",
                    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"]), None),
    ("aws-secret-beside-its-id", J(["AKIA", "IOSFODNN7", "EXAMPLE ",
                                    "wJalrXUtnFEMI/K7MDENG/bPxRfi", "CYEXAMPLEKEY"]),
     J(["wJalrXUtnFEMI/K7MDENG/bPxRfi", "CYEXAMPLEKEY"])),
    ("secret-key-setting", "SECRET_KEY=" + "django-insecure-8f2k!x9q", "django-insecure-8f2k!x9q"),
    ("redis-url-without-user", "redis://:" + "r3disPa55word" + "@cache.internal:6379/0",
     "r3disPa55word"),
    ("gitlab-token", J(["gl", "pat-", "Ab3dEf6hIj9kLm2nOp5q"]), None),
    ("huggingface-token", J(["h", "f_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"]), None),
    ("twilio-key", J(["S", "K", "0123456789abcdef", "fedcba9876543210"]), None),
    ("token-glued-to-a-name", J(["MY_TOKEN_", "gh", "p_", "Z9y8X7w6" * 4, "V5u4"]),
     J(["gh", "p_", "Z9y8X7w6" * 4, "V5u4"])),
    ("url-password-with-at", "postgres://app:" + "p@ss@w0rd" + "@db.internal/app", "p@ss@w0rd"),
]

# What the custom kind needs: the account's own pattern.
CUSTOM_PATTERN = r"ACME-[0-9]{6}"

EVERY_KIND = SECRETS + MISSED


def secret_of(entry) -> str:
    return entry[2] or entry[1]
