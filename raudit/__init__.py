"""raudit: audit differentially private synthetic-data generators by measurement.

From Python: ``import raudit.api as ra`` (``ra.train``, ``ra.audit``, ``ra.utility``,
``ra.inspect``, ``ra.campaign``, ``ra.report``; docs/python-api.md). ``import raudit``
itself stays cheap: it imports nothing else.
"""

__version__ = "0.1.0"
