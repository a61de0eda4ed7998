"""`raudit report`: a results folder (audit, utility, inspect or campaign) as a static
HTML page or Markdown, with PNG figures and CSV tables beside it.

``load`` reads the folder (both layouts: single store, campaign partitioned by job);
``audits``, ``utility``, ``inspect`` and ``provenance`` each build one section of the
report model (``model``); ``render`` writes it; ``build`` runs the whole.
"""
