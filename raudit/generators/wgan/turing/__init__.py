"""The faithful turing port of PATE-GAN: its loop (port), and where it has them, its networks and encoding."""
