"""The run layer: jobs, the scheduler that runs their chunks on one engine pool, and the
three entry points the commands and campaigns call
(:func:`raudit.runs.audit.run_audit`, :func:`raudit.runs.utility.run_utility`,
:func:`raudit.runs.inspect.run_inspect`).

::

    cli/  campaign/          compose requests and jobs (never compute)
    runs/                    run_audit / run_utility / run_inspect, jobs, schedule, dispatch
    report/                  reads results folders
    audit/ utility/ inspect/ requests, plans, chunk functions, analyses (import nothing above)
    engine/                  Ray

A single ``raudit audit`` is a one-job schedule, a campaign a many-job one: the same
chunks, seeds and store, hence the same numbers. ``tests/test_layers.py`` keeps the layers.
"""

