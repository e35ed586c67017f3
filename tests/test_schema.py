"""The JSON contract: the schema generated from the code equals the checked-in one, and real
output validates against it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from hep_advisor.document.schema import checked_in_schema, generate_schema, main, schema_text


def test_checked_in_schema_matches_the_code() -> None:
    assert generate_schema() == checked_in_schema(), "run `python -m hep_advisor.document.schema`"
    assert main(["--check"]) == 0


def test_schema_changes_when_the_code_changes() -> None:
    schema = generate_schema()
    tree = schema["$defs"]["TreeProfile"]
    assert "cluster_entries" in tree["required"]
    assert schema["$defs"]["Compression"]["properties"]["algorithm"]["anyOf"][0]["enum"] == [
        "ZLIB", "LZMA", "LZ4", "ZSTD", "OLD", "none"]
    drifted = json.loads(schema_text(schema))
    drifted["$defs"]["TreeProfile"]["required"].remove("cluster_entries")
    assert drifted != checked_in_schema()


def test_probe_json_follows_the_contract(tiny_demo: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "hep_advisor", "probe", str(tiny_demo), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, generate_schema())
    assert doc["schema_version"] == 1
    assert doc["producer"]["name"] == "hep-advisor"
    site, ds = doc["site"], doc["dataset"]
    assert {"physical_cores", "logical_cores"} <= site["cpu"].keys()
    assert {"total_bytes", "available_bytes"} <= site["memory"].keys()
    assert {"path", "mount_point", "fs_type", "device", "rotational",
            "read_ahead_kb"} <= site["storage"][0].keys()
    assert {"files", "total_bytes", "errors", "trees"} <= ds.keys()
    for tree in ds["trees"]:
        assert {"name", "files", "sampled_files", "entries", "events_per_file", "branches",
                "compressed_bytes", "uncompressed_bytes", "compression_factor", "compression",
                "baskets", "cluster_entries"} <= tree.keys()
        assert {"algorithm", "level"} <= tree["compression"].keys()
        assert {"count", "mean_compressed_bytes"} <= tree["baskets"].keys()
    assert "file_paths" not in ds  # internal, not part of the document
