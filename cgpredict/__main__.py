"""`python -m cgpredict ...`: the CLI without an installed entry point (e.g. PYTHONPATH=.)."""

from cgpredict.cli import entry

if __name__ == "__main__":
    entry()
