"""`python -m sandbox` is the `sandbox` command."""

import sys

from .cli import main

sys.exit(main())
