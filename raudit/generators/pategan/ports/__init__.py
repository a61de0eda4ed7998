"""The faithful PATE ports, one folder each, and what several of them share: base.py
(borealis, smartnoise), refit.py and logreg.py (updated, synthcity)."""
