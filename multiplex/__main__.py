"""``python -m multiplex``."""

from multiplex.cli import main

main()
