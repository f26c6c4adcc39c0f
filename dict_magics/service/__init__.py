"""The translation service, with no UI: the wire, signing, the client and its batch engine."""
