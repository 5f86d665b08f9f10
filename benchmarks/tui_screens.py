"""The TUI's screens for docs/subject.md: her verdict drawn at 80x24, exported with Textual's SVG export.

    python -m benchmarks.tui_screens docs/img

It writes ``tui-ward-80x24.svg`` (the ward of ``benchmarks.page_screens``, a patient at risk: her level as a badge,
her guess beside the base rate, her group) and ``tui-paper-80x24.svg`` (the paper's example: the random-match
distribution with her distance marked), each the results tab as she first sees it after *Check my record*.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path


async def _shot(release: Path, key: Path, record: Path, size: tuple[int, int]) -> str:
    from verifier.tui import SubjectApp

    app = SubjectApp(str(release), str(key), record_path=str(record), samples=2000)
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        app.screen.query_one("#check").focus()
        await pilot.press("enter")
        for _ in range(6):
            await pilot.pause()
            await app.workers.wait_for_complete()
        return app.export_screenshot(title="verifier tui: her verdict")


def main(argv: list[str] | None = None) -> int:
    out = Path((argv or sys.argv[1:] or ["docs/img"])[0])
    from benchmarks.page_screens import make_keys, paper_release, ward_release
    from verifier.data.paper import example_folder

    with tempfile.TemporaryDirectory() as folder, example_folder() as paper:
        root = Path(folder)
        make_keys(root)
        cases = {"paper": paper_release(root, Path(paper)), "ward": ward_release(root)}
        for name, (release, values) in cases.items():
            typed = {k: v if k in ("sex", "disease") else float(v) for k, v in values.items()}
            (root / f"{name}.json").write_text(json.dumps(typed))
            svg = asyncio.run(_shot(release, root / "keys" / "public.pem", root / f"{name}.json", (80, 24)))
            target = out / f"tui-{name}-80x24.svg"
            target.write_text(svg)
            print(json.dumps({"wrote": str(target), "size": "80x24"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
