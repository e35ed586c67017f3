"""What-if: change the workers, file sizes, read-ahead, page cache, devices, compression or
the share of the bytes read, and see the fitted rate model's prediction at once
(``Advice.predict``, in a worker thread so that typing never waits for it).  The rate model
takes any change or site, so it answers the what-ifs; the advice's own figures come from the
replay of the program's reader, and the pane says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Checkbox, Input, Label, Select, Static

from hep_advisor.tui import views
from hep_advisor.tui.panes.base import show_if_loaded

if TYPE_CHECKING:
    from hep_advisor.findings.advice import Advice
    from hep_advisor.models.scenarios import PredictionPoint
    from hep_advisor.render.scaling import ScalingData
    from hep_advisor.tui.source import Loaded

AS_NOW = "as now"
MERGE = ((AS_NOW, ""), ("100 MB", "100"), ("250 MB", "250"), ("500 MB", "500"),
         ("1 GB", "1000"), ("2 GB", "2000"), ("5 GB", "5000"))
READ_AHEAD = ((AS_NOW, ""), ("128 kB", "128"), ("512 kB", "512"), ("1 MB", "1024"),
              ("4 MB", "4096"), ("16 MB", "16384"))
STORAGE = ((AS_NOW, ""), ("NVMe", "nvme"), ("SATA SSD", "ssd"), ("HDD", "hdd"),
           ("2 separate disks", "separate:2"), ("4 separate disks", "separate:4"),
           ("8 separate disks", "separate:8"), ("RAID 0 of 4", "raid0:4"),
           ("RAID 5 of 4", "raid5:4"), ("4 separate SSDs", "separate:4:ssd"),
           ("4 separate NVMe", "separate:4:nvme"))
COMPRESSION = ((AS_NOW, ""), ("LZ4", "LZ4"), ("ZSTD", "ZSTD"), ("ZLIB", "ZLIB"),
               ("LZMA", "LZMA"), ("uncompressed", "none"))
BRANCHES = (("all", ""), ("50%", "0.5"), ("20%", "0.2"), ("10%", "0.1"), ("5%", "0.05"))
SELECTS = {"merge": MERGE, "read-ahead": READ_AHEAD, "storage": STORAGE,
           "compression": COMPRESSION, "branches": BRANCHES}
LABELS = {"workers": "Workers", "merge": "Merge to", "read-ahead": "Read-ahead",
          "cached": "Page cache", "storage": "Storage", "compression": "Compression",
          "branches": "Bytes read"}


class WhatIfPane(Horizontal):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.advice: Advice | None = None
        self.scenario: dict[str, Any] = {}
        self.worker_count = 1
        self.prediction: PredictionPoint | None = None
        self.now: PredictionPoint | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="wi-controls") as controls:
            controls.border_title = "Change"
            with Horizontal(classes="wi-row"):
                yield Label(LABELS["workers"], classes="wi-label")
                yield Input("1", type="integer", id="wi-workers", compact=True,
                            max_length=5)
            for name in ("merge", "read-ahead"):
                yield from self._select_row(name)
            with Horizontal(classes="wi-row"):
                yield Label(LABELS["cached"], classes="wi-label")
                yield Checkbox("data in RAM", id="wi-cached", compact=True)
            for name in ("storage", "compression", "branches"):
                yield from self._select_row(name)
        result = Static(Content.styled("The prediction appears once the model is fitted.",
                                       "$text-muted"), id="wi-result")
        result.border_title = "Prediction"
        yield result

    def _select_row(self, name: str) -> ComposeResult:
        with Horizontal(classes="wi-row"):
            yield Label(LABELS[name], classes="wi-label")
            yield Select(SELECTS[name], allow_blank=False, value="", id=f"wi-{name}",
                         compact=True)

    def on_mount(self) -> None:
        show_if_loaded(self)

    def show(self, loaded: Loaded, scaling: ScalingData | None) -> None:
        self.advice = loaded.advice
        now = self.advice.verdict.workers if self.advice.verdict else 1
        self.worker_count = now
        inp = self.query_one("#wi-workers", Input)
        with inp.prevent(Input.Changed):
            inp.value = str(now)
        self.recompute()

    def read_controls(self) -> None:
        """The scenario keywords and worker count from the controls."""
        kw: dict[str, Any] = {}
        merge = self.query_one("#wi-merge", Select).value
        if merge:
            kw["merge_mb"] = float(str(merge))
        ra = self.query_one("#wi-read-ahead", Select).value
        if ra:
            kw["read_ahead_kb"] = float(str(ra))
        if self.query_one("#wi-cached", Checkbox).value:
            kw["cached"] = True
        for name, keyword in (("storage", "storage"), ("compression", "compression")):
            v = self.query_one(f"#wi-{name}", Select).value
            if v:
                kw[keyword] = str(v)
        br = self.query_one("#wi-branches", Select).value
        if br:
            kw["branches"] = float(str(br))
        self.scenario = kw
        text = self.query_one("#wi-workers", Input).value.strip()
        try:
            n = int(text)
        except ValueError:
            n = 0
        self.worker_count = n

    @on(Input.Changed, "#wi-workers")
    @on(Select.Changed)
    @on(Checkbox.Changed, "#wi-cached")
    def _changed(self) -> None:
        self.recompute()

    def recompute(self) -> None:
        if self.advice is None:
            return
        self.read_controls()
        if not 1 <= self.worker_count <= 4096:
            self.error = "workers: a whole number from 1 to 4096"
            self._render_result()
            return
        self._predict(self.advice, self.worker_count, dict(self.scenario))

    @work(thread=True, exclusive=True, exit_on_error=False, group="whatif",
          description="what-if prediction")
    def _predict(self, advice: Advice, workers: int, kw: dict[str, Any]) -> None:
        try:
            base = advice.verdict.workers if advice.verdict else 1
            now = advice.predict(workers=base)[0]
            new = advice.predict(workers=workers, **kw)[0]
            result: tuple[PredictionPoint | None, PredictionPoint | None, str | None] = \
                (now, new, None)
        except (ValueError, ArithmeticError) as exc:
            result = (None, None, str(exc).splitlines()[0])
        self.app.call_from_thread(self._set, *result)

    def _set(self, now: PredictionPoint | None, new: PredictionPoint | None,
             error: str | None) -> None:
        self.now, self.prediction, self.error = now, new, error
        self._render_result()

    def _render_result(self) -> None:
        out = self.query_one("#wi-result", Static)
        if self.error:
            out.update(Content.styled(self.error, "bold $text-error"))
            return
        if self.prediction is None or self.advice is None:
            return
        level = self.advice.model.level if self.advice.model else 0.9
        described = describe(self.scenario)
        out.update(Content.assemble(
            views.prediction_content(self.now, self.prediction, level), "\n\n",
            (described, "$text-muted"), "\n",
            ("(the rate model's what-if)", "$text-muted")))


def describe(kw: dict[str, Any]) -> str:
    if not kw:
        return "No change: the analysis as it runs now, at another worker count."
    parts = []
    if "merge_mb" in kw:
        parts.append(f"files merged to {kw['merge_mb']:g} MB")
    if "read_ahead_kb" in kw:
        parts.append(f"read-ahead {kw['read_ahead_kb']:g} kB")
    if kw.get("cached"):
        parts.append("the data in the page cache")
    if "storage" in kw:
        parts.append(f"storage {kw['storage']}")
    if "compression" in kw:
        parts.append(f"compression {kw['compression']}")
    if "branches" in kw:
        parts.append(f"{100 * kw['branches']:g}% of the bytes read")
    return "With " + ", ".join(parts) + "."
