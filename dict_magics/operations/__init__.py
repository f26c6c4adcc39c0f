"""What a user can do, written once for every front end (magics, panel, command line).

An operation takes ``OperationSettings``, a ``Prompter`` and a ``ProgressSink``, and returns
models; it holds no widgets, no argparse and no printing. Each operation is its own module
(``delete``, ``purge``, ``login``, ``status``), loaded on first use so ``%load_ext`` stays light.
"""
