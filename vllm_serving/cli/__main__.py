import sys

from vllm_serving.cli import main

sys.exit(main())
