"""raudit: audit differentially private synthetic-data generators by measurement."""

__version__ = "0.1.0"
