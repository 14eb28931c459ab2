"""`python -m assay` runs the command-line interface."""

from assay._cli import main

raise SystemExit(main())
