"""The front ends (magics, panel, command line): they parse, prompt and show; ``operations``
decides."""
