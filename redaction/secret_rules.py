"""What redaction looks for: detect-secrets' rules, plus the few kinds it has none for.

The providers' key formats come from Yelp's detect-secrets (Apache-2.0, pinned in
requirements.txt): every regex-based plugin it ships is imported as it is, except the
ones EXCLUDED names with the reason. What it lacks is written here (LOCAL_RULES, each
with the kind it covers): whole private-key blocks and `<redacted>` marks, bare JWTs, AWS
secret keys next to their key id, Anthropic, OpenAI project, Hugging Face, GitHub
fine-grained, Slack, Stripe test and Google keys, this server's own keys, bearer tokens,
passwords in URLs (an `@` in them too) and `name = value` assignments.

Every rule must pass redaction/regex_safety.py (tests/notes/test_redaction.py checks each
one): a field is up to 20,000 characters and `re` has no time limit.

Each rule carries a `hint`: a regex that finds, in the text folded to lower case, something
every match of the rule contains (gitleaks calls these keywords). A rule runs only on text
where its hint is found, and the union of the hints is the screen that spares nearly every
text all the rules (redaction.may_hold_a_secret).

Tokens with a distinctive prefix (`ghp_`, `glpat-`, `hf_`, `AKIA`...) are found wherever
they start, also glued to a word (`MY_TOKEN_ghp_...`); the short generic prefixes (`sk-`,
`sk_test_`) only when no letter or digit is glued before them, so that `task-...` and
`risk_test_...` stay as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

# The rest of the token a detector's match ends in (when it ends in a token character), so
# that a key longer than the length its rule names leaves no tail behind. Possessive: it
# never gives characters back.
_REST_OF_TOKEN = r"(?:(?<=[A-Za-z0-9_-])[A-Za-z0-9_-]*+)?"


@dataclass(frozen=True)
class SecretRule:
    kind: str
    regex: re.Pattern[str]
    # Found (in folded text) in every text the regex matches; see the module docstring.
    hint: re.Pattern[str]
    # The group that is the secret; 0 = the whole match (the rest of the match is kept).
    group: int = 0
    source: str = "echo-memory"


def _rule(kind: str, pattern: str, hint: str, *, group: int = 0, flags: int = 0) -> SecretRule:
    return SecretRule(kind, re.compile(pattern, flags), re.compile(hint), group)


# detect-secrets' regex-based plugins (by class name) left out, and why.
EXCLUDED = {
    "ArtifactoryDetector": "its password rule (AP, a hex digit, 8+ letters) matches ordinary "
                           "upper-case words such as APACHEKAFKA01",
    "IPPublicDetector": "a public IP address is not a secret",
    "JwtTokenDetector": "its regex can backtrack for minutes (two unbounded repeats meet) and "
                        "its lazy tail stops before the signature; LOCAL_RULES has one",
    "NpmDetector": "its regex can backtrack for minutes (.+ then \\s* then .*)",
    "PrivateKeyDetector": "it finds the BEGIN line only; LOCAL_RULES redacts the whole block",
    "SlackDetector": "its token regex nests repeats ((?:\\d+-)+) and can backtrack for "
                     "minutes; LOCAL_RULES has one",
}

# For each plugin imported: the hint of its rules (lower case; \d as its regex has it).
HINTS = {
    "AWSKeyDetector": r"a3t|abia|acca|akia|asia|aws",
    "AzureStorageKeyDetector": r"accountkey=",
    "BasicAuthDetector": r"://",
    "CloudantDetector": r"cl(?:oudant|ou)?[_-]?(?:api)?(?:key|pw|pass|token)|cloudant",
    "DiscordBotTokenDetector": r"\.[a-z\d_-]{6}\.",
    "GitHubTokenDetector": r"gh[pousr]_",
    "GitLabTokenDetector": r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|gr1348941",
    "IbmCloudIamDetector": r"key|pwd|pass|token",
    "IbmCosHmacDetector": r"secret[-_]?(?:access)?[-_]?key",
    "MailchimpDetector": r"-us\d",
    "OpenAIDetector": r"t3blbkfj",
    "PypiTokenDetector": r"pypi-ag",
    "SendGridDetector": r"sg\.",
    "SoftlayerDetector": r"key|pwd|pass|token|softlayer",
    "SquareOAuthDetector": r"sq0csp-",
    "StripeDetector": r"[rs]k_live_",
    "TelegramBotTokenDetector": r"\d{8}:",
    "TwilioKeyDetector": r"(?:ac|sk)[a-z0-9]{32}",
}


def _kind(secret_type: str) -> str:
    """detect-secrets' name for a kind, as a placeholder label: 'AWS Access Key' ->
    'aws-access-key'."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def regex_plugins() -> dict[str, type[RegexBasedDetector]]:
    """Every regex-based plugin the installed detect-secrets ships, by class name."""
    return {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()
            if issubclass(cls, RegexBasedDetector)
            and cls.__module__.startswith("detect_secrets.plugins.")}


@cache
def imported_rules() -> tuple[SecretRule, ...]:
    """detect-secrets' rules, less EXCLUDED. A plugin a newer release adds has no hint
    here yet: it is refused (KeyError), so an upgrade cannot slip in an unscreened rule;
    tests/notes/test_redaction.py names it first."""
    rules = []
    for name, plugin in sorted(regex_plugins().items()):
        if name in EXCLUDED:
            continue
        hint = re.compile(HINTS[name])
        for regex in plugin.denylist:
            # The whole match is the secret: the plugins' groups are sometimes the secret,
            # sometimes a prefix (GitHub's `(ghp|gho|...)`), so none is trusted to be.
            pattern = f"(?:{regex.pattern}){_REST_OF_TOKEN}"
            rules.append(SecretRule(_kind(plugin.secret_type), re.compile(pattern, regex.flags),
                                    hint, source="detect-secrets"))
    return tuple(rules)


# Names that announce a secret in `name = value` / `"name": "value"`: a prefix is allowed
# (OPENAI_API_KEY, db_password, client_secret), and a suffix that still names the secret
# (SECRET_KEY, SECRET_KEY_BASE, password_hash).
_SECRET_NAME = (r"[A-Za-z0-9_.-]*?(?:password|passwd|pwd|passphrase|secret|api[_-]?key|"
                r"access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|"
                r"private[_-]?key|credentials?|token)(?:[_.-]?(?:key|base|value|hash|string)){0,2}")
_SECRET_NAME_HINT = (r"pass|pwd|secret|api[_-]?key|access[_-]?key|private[_-]?key|token|"
                     r"credential")
# Values that are not secrets even after a secret's name: placeholders, booleans, empties,
# references to where the secret really lives.
_NOT_A_VALUE = (r"(?!\[REDACTED|(?:true|false|null|none|nil|yes|no|enabled|disabled|"
                r"required|optional|redacted|changeme)\b|\$\{|\$[A-Z_]|<[^>]*>|os\.environ|"
                r"env\(|process\.env|\*{3,})")
# An AWS access key id, and a secret access key: 40 characters of base64 standing alone.
# Within 40 characters of a key id any such token is taken for the key's secret (a git
# SHA that close to a key id too: the safe side).
_AWS_KEY_ID = r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
_AWS_SECRET = r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"

LOCAL_RULES: tuple[SecretRule, ...] = (
    # Blocks that may hold other secrets go first, whole.
    _rule("private-key", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
          r"(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", r"-----begin",
          flags=re.DOTALL),
    _rule("marked", r"<redacted>.*?(?:</redacted>|\Z)", r"<redacted>",
          flags=re.DOTALL | re.IGNORECASE),
    # Before the key id's own rule takes the id that tells this one where to look.
    _rule("aws-secret-key", rf"{_AWS_KEY_ID}.{{1,40}}?{_AWS_SECRET}", r"a3t|abia|acca|akia|asia",
          group=1),
    _rule("aws-secret-key", rf"{_AWS_SECRET}.{{1,40}}?{_AWS_KEY_ID}", r"a3t|abia|acca|akia|asia",
          group=1),
    _rule("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*+", r"eyj"),
    _rule("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", r"sk-ant-"),
    _rule("openai-key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}", r"sk-"),
    _rule("openai-key", r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}", r"sk-"),
    _rule("huggingface-token", r"hf_[A-Za-z0-9]{30,}", r"hf_"),
    # detect-secrets' GitHub and Stripe rules take exactly today's lengths (36 and 24
    # characters); these keep the wider net redaction had before them, so a token of
    # another length (an older or newer format, a truncated paste) is still caught.
    _rule("github-token", r"gh[pousr]_[A-Za-z0-9]{30,}", r"gh[pousr]_"),
    _rule("github-token", r"github_pat_[A-Za-z0-9_]{22,}", r"github_pat_"),
    _rule("slack-token", r"xox[abposre]-[A-Za-z0-9-]{10,}", r"xox[abposre]-"),
    _rule("stripe-key", r"(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
          r"[rs]k_(?:live|test)_"),
    _rule("google-api-key", r"AIza[0-9A-Za-z_-]{35}", r"aiza"),
    _rule("echo-memory-key", r"em_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", r"em_"),
    _rule("bearer-token", r"\b[Bb]earer\s+([A-Za-z0-9._~+/-]{16,}=*)", r"bearer", group=1),
    # `scheme://user:password@host`, whatever the scheme is glued to; the user may be
    # empty (redis://:pw@host) and the password may hold `@` (the last one before the
    # host ends it). Bounded, so a long run after `://` with no `@` costs little.
    _rule("url-password", r"://[^/\s:@]{0,256}:([^/\s]{1,256})@",
          r"://", group=1),
    # `password=...`, `API_KEY: "..."`, `"secret": "..."`: quoted values whole, unquoted
    # ones up to whitespace or a separator.
    _rule("secret-assignment",
          rf"\b{_SECRET_NAME}[\"']?\s*[:=]\s*[\"']{_NOT_A_VALUE}([^\"'\n]{{4,}})[\"']",
          _SECRET_NAME_HINT, group=1, flags=re.IGNORECASE),
    _rule("secret-assignment", rf"\b{_SECRET_NAME}\s*=\s*{_NOT_A_VALUE}([^\s\"',;&)]{{6,}})",
          _SECRET_NAME_HINT, group=1, flags=re.IGNORECASE),
    # After a colon in prose ("password: ...") only what looks like a secret (a digit or
    # a symbol among letters), so "Password: the user resets it" stays as written.
    _rule("secret-assignment",
          rf"\b{_SECRET_NAME}\s*:\s*{_NOT_A_VALUE}"
          r"((?=[^\s\"',;]*[0-9!#$%^&*+/=?@_~-])[^\s\"',;]{6,})",
          _SECRET_NAME_HINT, group=1, flags=re.IGNORECASE),
)


@cache
def secret_rules() -> tuple[SecretRule, ...]:
    """Every rule, in the order they run: ours in _FIRST, then detect-secrets' provider
    formats, then the rest of ours (the generic shapes last)."""
    head = [rule for rule in LOCAL_RULES if rule.kind in _FIRST]
    tail = [rule for rule in LOCAL_RULES if rule.kind not in _FIRST]
    return (*head, *imported_rules(), *tail)


# Ours that run before detect-secrets': blocks, pairs, and URL passwords (its BasicAuth
# rule takes the scheme and user with the password, and misses an empty user or an `@`).
_FIRST = {"private-key", "marked", "aws-secret-key", "jwt", "url-password"}
