"""``python -m ember ...`` runs the ``ember`` command (``ember.cli``)."""
import sys

from .cli import main

sys.exit(main())
