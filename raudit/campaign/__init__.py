"""Campaign files: many jobs over one actor pool (``raudit campaign``).

To run one from Python: :func:`raudit.api.campaign` (docs/python-api.md).
"""
