"""raudit's benchmark suite: ``python -m benchmarks readme`` measures the README's figures
(see ``benchmarks/__main__.py``); each script beside it also runs alone."""
