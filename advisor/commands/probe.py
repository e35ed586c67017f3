"""``hep-advisor probe``: the site and dataset probes, as a Rich summary or JSON."""

from __future__ import annotations

import argparse

from hep_advisor.commands.common import EXIT_NO_DATA, EXIT_OK


def run_probe(args: argparse.Namespace) -> int:
    from hep_advisor.commands.console import demo_paths, dump_json, print_errors, progress_bar
    from hep_advisor.document.report import document_json, make_document
    from hep_advisor.probes import probe_dataset, probe_site, storage_paths

    paths = list(args.paths) or demo_paths()
    with progress_bar("probing files", enabled=not args.json) as update:
        dataset = probe_dataset(paths, sample=args.sample or None, progress=update)
    site = probe_site(storage_paths(paths, dataset.file_paths))
    print_errors(dataset.errors)
    doc = make_document("probe", site, dataset)
    if args.json:
        dump_json(document_json(doc))
    else:
        from rich.console import Console

        from hep_advisor.render.probe_view import dataset_view, site_view

        console = Console()
        console.print(site_view(site))
        console.print(dataset_view(dataset, branches=args.branches, show_errors=False))
    return EXIT_OK if dataset.usable else EXIT_NO_DATA

