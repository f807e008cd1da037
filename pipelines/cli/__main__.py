import sys

from pipelines.cli.main import main

sys.exit(main())
