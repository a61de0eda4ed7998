"""The utility benchmark (``raudit utility``).

To run it from Python: :func:`raudit.api.utility` (docs/python-api.md).
"""
