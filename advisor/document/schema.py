"""The JSON Schema of hep-advisor's documents, generated from the code.

``python -m hep_advisor.document.schema`` rewrites the checked-in copy; ``--check`` exits 1 when it
drifted.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from hep_advisor.document.report import SCHEMA_VERSION, Document
from hep_advisor.findings.jsonio import schema_for

SCHEMA_FILE = "hep-advisor.schema.json"


def generate_schema() -> dict[str, Any]:
    schema = schema_for(
        Document,
        title=f"hep-advisor document, schema version {SCHEMA_VERSION}",
        schema_id=f"https://hep-advisor.invalid/schema/v{SCHEMA_VERSION}/{SCHEMA_FILE}",
    )
    schema["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    return schema


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def checked_in_schema() -> dict[str, Any]:
    schemas = resources.files("hep_advisor.document").joinpath("schemas")
    text = schemas.joinpath(SCHEMA_FILE).read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "-h" in args or "--help" in args:
        print("usage: python -m hep_advisor.document.schema [--check]\n\nWrite the JSON "
              "schema generated from the result types to advisor/document/schemas/; with "
              "--check, only compare (exit 1 when the checked-in file is out of date).")
        return 0
    unknown = [a for a in args if a != "--check"]
    if unknown:
        print(f"hep_advisor.document.schema: unknown argument {unknown[0]!r} (try --help)",
              file=sys.stderr)
        return 2
    target = Path(__file__).parent / "schemas" / SCHEMA_FILE
    text = schema_text(generate_schema())
    if "--check" in args:
        if target.read_text() != text:
            print(f"{target}: out of date; run `python -m hep_advisor.document.schema`",
                  file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
