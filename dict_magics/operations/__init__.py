"""What a user can do, written once for every front end: each operation is its own module,
takes ``OperationSettings`` (and a ``Prompter``, a ``ProgressSink``) and returns models; no
widgets, argparse or printing here."""
