from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

# The most requests a minute a self-hosted box's operator may give one key.
KEY_RATE_MAX = 100_000


class Account(models.Model):
    """A tenant: every memory, key and graph row belongs to exactly one."""

    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="accounts"
    )
    # Where a call that names no memory goes when its key names none either.
    default_memory = models.ForeignKey(
        "memories.Memory", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="default_of",
    )
    # Secrets in what agents write are replaced before storage (redaction/redactor.py);
    # the account's own regexes are checked by redaction.check_user_patterns when saved.
    redact_secrets = models.BooleanField(default=True)
    redaction_patterns = models.JSONField(default=list, blank=True)
    # Every member signs in with a second factor (accounts/second_factor_policy.py).
    require_second_factor = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "account"], name="membership_once_per_account")
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.account}"


class ApiKey(models.Model):
    """A credential: shown once as `em_<prefix>_<secret>`; only the secret's hash is kept."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="api_keys")
    holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100)
    tool = models.CharField(
        max_length=64, help_text="The agent this key is for, e.g. claude-code or support-bot."
    )
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    default_memory = models.ForeignKey(
        "memories.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Only a self-hosted box reads it (echomem/admission.py); the hosted service keeps each
    # plan's rate. Set through accounts.services.api_key_rate_limit_set.
    requests_per_minute = models.PositiveIntegerField(
        null=True, blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(KEY_RATE_MAX)],
        help_text="Requests per rolling minute for this key, /mcp and /api/v1 together, on a "
                  "self-hosted box. Empty: the box's default (240).")
    # The key's limits (accounts/limits.py checks them on every call): read only; the
    # memories it may use (None: every memory of the account; else its default is among
    # them); the moment it stops working. Set at creation, carried over by a rotation.
    read_only = models.BooleanField(default=False, editable=False)
    memory_ids = ArrayField(models.BigIntegerField(), null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Where the key was last used from (an IPv4 /24 or IPv6 /48), written with last_used_at.
    last_used_network = models.CharField(max_length=64, blank=True, default="",
                                         editable=False)
    # A rotation's old secret, working until previous_secret_until (then it is dead).
    previous_secret_hash = models.CharField(max_length=64, blank=True, default="",
                                            editable=False)
    previous_secret_until = models.DateTimeField(null=True, blank=True, editable=False)
    rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    # When the holder was mailed that the key expires within a week (once per key).
    expiry_mailed_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "API key"
        indexes = [
            models.Index(
                fields=["account", "holder"], name="apikey_active_by_holder",
                condition=Q(revoked_at__isnull=True),
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} (em_{self.prefix}_…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Invitation(models.Model):
    """An emailed link to join an account; only the token's hash is kept, like API keys."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=150)
    role = models.CharField(max_length=16, choices=Membership.Role.choices,
                            default=Membership.Role.MEMBER)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["account", "email"], name="invitation_pending",
                         condition=Q(accepted_at__isnull=True, revoked_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{self.email} invited to {self.account} as {self.role}"


class SignedInSession(models.Model):
    """A browser session a person signed in with (the site's or the admin's sign-in), as the
    sessions page lists it. Keyed by the Django session's key, which is never shown: the page
    names a session by this row's id. Deleting the row does not end the session; the
    services in accounts/sessions.py end both together."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="signed_in_sessions")
    session_key = models.CharField(max_length=40, unique=True)
    device = models.CharField(max_length=80, blank=True, default="")
    network = models.CharField(max_length=64, blank=True, default="")
    door = models.CharField(max_length=16, default="site")  # "site" or "admin"
    # Null for a session signed in before sessions were tracked (first seen since).
    signed_in_at = models.DateTimeField(null=True)
    last_seen_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["user", "last_seen_at"], name="signed_in_by_user")]


class SignInNetwork(models.Model):
    """A network (IPv4 /24, IPv6 /48) a person has signed in from: a sign-in from one not
    listed is a security event (accounts/security_events.py)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    network = models.CharField(max_length=64)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "network"],
                                               name="sign_in_network_once_per_user")]


class Connection(models.Model):
    """An app (an OAuth client) a person let act for them in one account: what they chose
    on the consent page. Every token the app holds for them points here through its
    (user, application) pair, and it becomes a Principal with a key's limits
    (accounts/connections.py). One live connection per person and app: consenting again
    changes it, revoking ends it and every token under it."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="connections")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="connections")
    application = models.ForeignKey(settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
                                    on_delete=models.CASCADE, related_name="connections")
    # The tool label its writes carry (oauth:<client_id>, see accounts/connections.py).
    tool = models.CharField(max_length=64, editable=False)
    read_only = models.BooleanField(default=False)
    # As on a key: None is every memory of the account; else the default is among them.
    memory_ids = ArrayField(models.BigIntegerField(), null=True, blank=True)
    default_memory = models.ForeignKey(
        "memories.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    consented_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_used_network = models.CharField(max_length=64, blank=True, default="", editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "application"],
                                    condition=Q(revoked_at__isnull=True),
                                    name="connection_one_live_per_user_and_app"),
        ]

    def __str__(self) -> str:
        return f"{self.application} for {self.user} in {self.account}"


class PersonSettings(models.Model):
    """One person's own choices, whatever account they act in (the account's settings are
    the Account's). Created on first save; no row means every default."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="person_settings")
    # An IANA name (accounts/preferences.py checks it against zoneinfo); blank follows the
    # browser's own zone.
    time_zone = models.CharField(max_length=64, blank=True, default="")
