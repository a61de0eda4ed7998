"""The distinguishing game, its estimators and verdicts (``raudit audit``).

To run an audit from Python: :func:`raudit.api.audit` (docs/python-api.md).
"""
