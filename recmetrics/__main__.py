"""``python -m recmetrics``: the same as the ``recmetrics`` command (see recmetrics.cli)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
