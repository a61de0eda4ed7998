"""Cross-check a port against the released code it reproduces (`raudit crosscheck`).

``sides`` runs the two sides (the port batched in process, the released code out of
process through ``--impl exec:``), ``checks`` compares them (named checks with
pass/fail and numbers), ``report`` writes the verdict and the JSON/Markdown report,
``runner`` ties them together.
"""
