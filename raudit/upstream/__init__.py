"""Released implementations run as released: catalog, environments, entry scripts.

``catalog`` says what can be installed (and what cannot, and why); ``envs`` builds an
isolated virtual environment per package and writes the exec: config that
:mod:`raudit.generators.exec_adapter` runs; ``entries/`` holds the scripts that run
inside those environments (stdlib and the package only, never raudit).
"""
