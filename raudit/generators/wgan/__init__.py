"""The discriminator-only WGAN-GP ports `original` and `turing` (no PATE): their shared
loop (gp.py), its compiled step (step.py) and their label noise (label_noise.py)."""
