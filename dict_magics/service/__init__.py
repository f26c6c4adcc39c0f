"""The translation service, with no UI: paths, signing, transport, retry policy, client, models.

Nothing here imports a front end, an operation or a renderer (a test checks it).
"""
