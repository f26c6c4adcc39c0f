"""The front ends: IPython magics, the widget panel, the command line, progress displays.

They parse, prompt and show; every decision is made in ``dict_magics.operations``.
"""
