"""The faithful synthcity port of PATE-GAN: its generator (port), its loop (training),
its networks and its encoding."""
