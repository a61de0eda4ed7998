"""Instrumented training and its privacy checks (``raudit inspect``).

To run it from Python: :func:`raudit.api.inspect` (docs/python-api.md).
"""
