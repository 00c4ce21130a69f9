"""A stand-in for vLLM v0.19.1 in the tests of the preflight's `engine` check.

The modules, entry points and signatures the check calls, where v0.19.1 has them, raising what
v0.19.1 raises for the same input, in its words (each message copied from the file named beside
it, paths inside the v0.19.1 wheel). The parser is built from the project's registry of v0.19.1
(`release.json` beside this file, copied there by the test or the stand-in image), so its flags,
choices and types are the release's. Standard library only: it runs in the stand-in image.
Test knob: FAKE_VLLM_ARGV_FILE, where the parser records the argv and environment it was given.
"""

import json
from pathlib import Path

__version__ = "0.19.1"
RELEASE = json.loads((Path(__file__).parent / "release.json").read_text(encoding="utf-8"))
