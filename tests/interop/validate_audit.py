"""Validates every line of an audit log against docs/audit-event.schema.json.

Usage: validate_audit.py SCHEMA LOG. Prints each invalid line with the reason; exits 1 if any.
"""

import json
import sys

from jsonschema import Draft202012Validator


def main() -> int:
    schema_path, log_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    bad = 0
    total = 0
    with open(log_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            total += 1
            errors = sorted(validator.iter_errors(json.loads(line)), key=str)
            for e in errors:
                bad += 1
                path = "/".join(str(p) for p in e.absolute_path)
                print(f"line {number}: /{path}: {e.message}")
    print(f"{total} lines, {bad} problems")
    return 1 if bad or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
