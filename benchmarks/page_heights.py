"""How tall each game page of the built documentation site is, read as a visitor reads it: Debian's Chromium
(driven by Playwright) at 1,280×900, the page's full scroll height in CSS pixels.

    python -m sphinx -W -q -b html docs /tmp/site     # build the site
    python -m benchmarks.page_heights /tmp/site       # one line a game page; exit 1 past the limit

A game page is meant to be read in a couple of minutes: :data:`LIMIT_PX` is the most it may take.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

#: the browser the measurement drives (Debian's package; Playwright's own downloads are not used)
CHROMIUM = "/usr/bin/chromium"
#: the window a page is read in
WIDTH, HEIGHT = 1280, 900
#: the tallest a game page may be at that width
LIMIT_PX = 6000
#: the game pages, by file name under ``games/``
GAME_PAGES = ("sequence", "pans_trial", "dojo", "wizard_arena")


def page_heights(site: pathlib.Path, pages: tuple[str, ...] = GAME_PAGES) -> dict[str, int]:
    """``{page: height in px}`` for each game page of the built site ``site``."""
    from playwright.sync_api import sync_playwright

    heights = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            for name in pages:
                path = site / "games" / f"{name}.html"
                if not path.is_file():
                    raise FileNotFoundError(f"{path} does not exist: build the site into {site} first")
                page.goto(path.resolve().as_uri())
                page.wait_for_load_state("load")
                heights[name] = int(page.evaluate("document.documentElement.scrollHeight"))
        finally:
            browser.close()
    return heights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page_heights", description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=pathlib.Path, help="the built site's folder (sphinx -b html's output)")
    args = parser.parse_args(argv)
    heights = page_heights(args.site)
    for name, px in heights.items():
        print(f"games/{name}.html: {px:,} px" + ("" if px <= LIMIT_PX else f"  (over {LIMIT_PX:,})"))
    return 0 if max(heights.values()) <= LIMIT_PX else 1


if __name__ == "__main__":
    from agents.errors import run_command

    sys.exit(run_command(main, "python -m benchmarks.page_heights", also=(FileNotFoundError,)))
