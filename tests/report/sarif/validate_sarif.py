#!/usr/bin/env python3
# tests/report/sarif: validates SARIF logs against the official SARIF 2.1.0 JSON schema
# (sarif-schema-2.1.0.json beside this file: OASIS, errata01) with python3-jsonschema.
# Usage: validate_sarif.py LOG.sarif...  Exit 0 when every log is valid; 1 with one line per
# error; 77 when jsonschema is not installed (the test then skips).
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "sarif-schema-2.1.0.json"), encoding="utf-8") as f:
    schema = json.load(f)
validator = jsonschema.Draft4Validator(schema)
failed = False
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    for error in validator.iter_errors(log):
        failed = True
        where = "/".join(str(p) for p in error.absolute_path)
        print(f"{path}: {where}: {error.message}")
sys.exit(1 if failed else 0)
