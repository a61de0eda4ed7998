"""`fixed`: the generator (generator.py) and the parts only it uses."""
