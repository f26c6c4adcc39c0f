"""What a user can do, written once for every front end (magics, panel, command line).

An operation takes settings, a prompter and a progress sink, and returns models; it holds no
widgets, no argparse and no printing.
"""
