"""Two-factor sign-in's settings (docs/security.md, "Two-factor sign-in"), star-imported by
echomem.settings: django-otp's TOTP and static (recovery code) devices and
django-otp-webauthn's passkeys (accounts/second_factors.py)."""

SECOND_FACTOR_APPS = [
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "django_otp_webauthn",
]
# After AuthenticationMiddleware: request.user.is_verified() (whether this session passed
# a second factor), then the gate: a session that owes a second factor or its set-up
# reaches only the pages that settle it (web/second_factor_gate.py); keys at /mcp and
# /api are not sessions.
SECOND_FACTOR_MIDDLEWARE = [
    "django_otp.middleware.OTPMiddleware",
    "web.second_factor_gate.SecondFactorGate",
]
# The authenticator app shows this issuer beside the code.
OTP_TOTP_ISSUER = "Echo Memory"
# A passkey is a second factor only: the password comes first.
OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN = False
OTP_WEBAUTHN_RP_NAME = "Echo Memory"
# The relying party is the public URL's host (a passkey's cannot be an IP address); the
# helper answers per request, the callable is what the package's configuration check reads.
OTP_WEBAUTHN_HELPER_CLASS = "accounts.passkeys.PasskeyHelper"
OTP_WEBAUTHN_RP_ID_CALLABLE = "accounts.passkeys.relying_party_id"
# Only for that check too: the helper names the public URL's origin (and, with none
# configured, the page's own on the same host) for each ceremony.
OTP_WEBAUTHN_ALLOWED_ORIGINS = ["http://localhost:8000"]
