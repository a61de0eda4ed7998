"""The faithful updated port of PATE-GAN: its loop (port), and where it has them, its networks and encoding."""
