"""Helpers for the real-browser tests: a throw-away JupyterLab, notebooks, and Chromium."""
