"""Entry scripts run inside the upstream environments (stdlib + that environment only).

Nothing here may import raudit: ``raudit upstream setup`` copies a script next to its
environment and the exec adapter runs it with that environment's interpreter.
"""
