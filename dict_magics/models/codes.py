"""The vendor's documented error codes, shared by the client and the sandbox. The vendor does
not document the HTTP status that comes with one: an answer is judged by its code."""

from __future__ import annotations

ENGINE_AUTH = 40001
"""Engine authentication failed (also: a Bearer token that is invalid or expired)."""
KEY_UNKNOWN = 40002
"""The access key does not exist."""
KEY_INVALID = 40003
"""The key is invalid (malformed, disabled, or a secret that does not match)."""
NONCE_TOO_SMALL = 40005
"""The nonce is not greater than the last one accepted for the access key: not acted on."""
SIGNATURE_INCORRECT = 40006
NONCE_TOO_BIG = 40008
"""The nonce is not a number, or above ``MAX_NONCE``."""
FREQUENCY_LIMIT = 40103
"""Request frequency limit exceeded: re-send after a while (not acted on)."""
MISSING_ARGUMENT = 40200
INVALID_TYPE = 40201
INVALID_PARAMETERS = 40202

MAX_NONCE = 9_223_372_036_854_775_807
"""The largest nonce the service takes (a signed 64-bit integer)."""

MESSAGES: dict[int, str] = {
    ENGINE_AUTH: "Engine authentication failed",
    KEY_UNKNOWN: "Access key does not exist",
    KEY_INVALID: "Key is invalid",
    NONCE_TOO_SMALL: "Nonce value is too small",
    SIGNATURE_INCORRECT: "The signature is incorrect.",
    NONCE_TOO_BIG: "Nonce value is too big",
    FREQUENCY_LIMIT: "Request frequency limit exceeded, please re-send after a while",
    MISSING_ARGUMENT: "Required argument missing",
    INVALID_TYPE: "Invalid argument type",
    INVALID_PARAMETERS: "Missing or invalid parameter(s)",
}
"""Every documented code with the vendor's words for it."""

AUTH_CODES = frozenset({ENGINE_AUTH, KEY_UNKNOWN, KEY_INVALID, SIGNATURE_INCORRECT})
"""Codes that say the credentials (key, secret, signature, token) were refused."""
DATA_CODES = frozenset({MISSING_ARGUMENT, INVALID_TYPE, INVALID_PARAMETERS})
"""Codes that say the request's data is the caller's problem: never worth sending again."""
