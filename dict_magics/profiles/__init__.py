"""Credential profiles: the OS keyring, environment overrides, the secret wrapper, the status."""
