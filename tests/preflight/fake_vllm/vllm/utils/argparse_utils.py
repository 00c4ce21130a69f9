"""FlexibleArgumentParser (vllm/utils/argparse_utils.py): argparse after rewriting `--a_b` to
`--a-b` up to the first `.` or `=`; it records what it was given (FAKE_VLLM_ARGV_FILE)."""

import argparse
import json
import os
import re


class FlexibleArgumentParser(argparse.ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        args = list(args)
        record = os.environ.get("FAKE_VLLM_ARGV_FILE")
        if record:
            with open(record, "w", encoding="utf-8") as f:
                json.dump({"argv": args[1:] if args[:1] == ["serve"] else args, "env": dict(os.environ)}, f)
        rewritten = [re.sub(r"^--[^.=]*", lambda m: m.group(0).replace("_", "-"), a) for a in args]
        return super().parse_args(rewritten, namespace)
