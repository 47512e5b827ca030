"""`python -m woods` runs the CLI (same as the `woods` console script)."""

from woods.cli import main

main()
