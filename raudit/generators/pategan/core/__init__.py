"""What every PATE-GAN variant shares: the loop, its networks and teachers, partitions,
vote aggregation (Confident-GNMax included), options, encodings, noise calibration."""
