"""``python -m hep_advisor`` is ``hep-advisor``."""

from .cli import main

raise SystemExit(main())
