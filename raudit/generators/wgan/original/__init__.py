"""The faithful original port of PATE-GAN: its loop (port), and where it has them, its networks and encoding."""
