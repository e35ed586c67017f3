"""``python -m advisor`` is ``hep-advisor``."""

from .cli import main

raise SystemExit(main())
