"""The vendor's documented error codes, shared by the client and the sandbox. The vendor does
not document the HTTP status that comes with one: an answer is judged by its code."""

from __future__ import annotations

ENGINE_AUTH = 40001  # also: a Bearer token that is invalid or expired
KEY_UNKNOWN = 40002
KEY_INVALID = 40003  # malformed, disabled, or a secret that does not match
NONCE_TOO_SMALL = 40005  # not above the last one accepted for the key: not acted on
SIGNATURE_INCORRECT = 40006
NONCE_TOO_BIG = 40008  # not a number, or above MAX_NONCE
FREQUENCY_LIMIT = 40103  # re-send after a while (not acted on)
MISSING_ARGUMENT = 40200
INVALID_TYPE = 40201
INVALID_PARAMETERS = 40202

MAX_NONCE = 9_223_372_036_854_775_807  # a signed 64-bit integer

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
}  # every documented code with the vendor's words for it

# The credentials (key, secret, signature, token) were refused:
AUTH_CODES = frozenset({ENGINE_AUTH, KEY_UNKNOWN, KEY_INVALID, SIGNATURE_INCORRECT})
# The request's data is the caller's problem: never worth sending again.
DATA_CODES = frozenset({MISSING_ARGUMENT, INVALID_TYPE, INVALID_PARAMETERS})
