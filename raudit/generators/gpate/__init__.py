"""G-PATE (private aggregation of teacher discriminators' gradients) on the batched engine.

``dpgradagg``: the private gradient aggregation; ``nets``: tabular and MNIST networks;
``loop``: the training loop; ``generator``: the registered ``gpate`` class. The accountant
is :mod:`raudit.accountants.confident` (data-dependent Confident-GNMax RDP).
"""
