"""``python -m hep_advisor`` is ``hep-advisor``."""

from hep_advisor.cli import main

raise SystemExit(main())
