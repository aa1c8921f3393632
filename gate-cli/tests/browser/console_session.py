"""A person on call using `gate console` in headless Chromium (Playwright).

Driven by gate-cli/tests/console.rs, which fills a store, starts the
console and asserts on what this script prints: it opens the page, reads
what the rows show, approves one request, denies one with a reason and
resolves one intent and reopens the failed task `t-lost` through the page's
own forms, as a person would click
them. Every line on stdout is one JSON object: {"step": NAME, ...seen}.
"""

import argparse
import json

from playwright.sync_api import sync_playwright


def report(step, **seen):
    print(json.dumps({"step": step, **seen}), flush=True)


def row(page, kind, ident):
    return page.locator(f'[id="{kind}-{ident}"]')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--approve", required=True)
    parser.add_argument("--deny", required=True)
    parser.add_argument("--resolve", required=True)
    args = parser.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        page.goto(args.url)
        report(
            "opened",
            title=page.title(),
            headings=page.locator("h2").all_inner_texts(),
            scripts=page.locator("script").count(),
            images=page.locator("img").count(),
            arguments={
                ident: row(page, "approval", ident).locator("pre.arguments").inner_text()
                for ident in (args.approve, args.deny)
            },
            intents=page.locator('[id^="intent-"]').count(),
        )

        approve = row(page, "approval", args.approve).locator('form[data-action="approve"]')
        approve.locator('input[name="note"]').fill("checked with the customer")
        approve.locator("button").click()
        page.wait_for_load_state()
        report("approved", outcome=page.locator("#outcome").inner_text())

        page.goto(args.url)
        deny = row(page, "approval", args.deny).locator('form[data-action="deny"]')
        deny.locator('input[name="reason"]').fill("wrong account")
        deny.locator("button").click()
        page.wait_for_load_state()
        report("denied", outcome=page.locator("#outcome").inner_text())

        page.goto(args.url)
        resolve = row(page, "intent", args.resolve).locator('form[data-action="resolve"]')
        resolve.locator('select[name="outcome"]').select_option("succeeded")
        resolve.locator('input[name="note"]').fill("the provider shows ch_1")
        resolve.locator("button").click()
        page.wait_for_load_state()
        report("resolved", outcome=page.locator("#outcome").inner_text())

        page.goto(args.url)
        page.locator('[id="task-t-lost"] form[data-action="reopen"] button').click()
        page.wait_for_load_state()
        report("reopened", outcome=page.locator("#outcome").inner_text())

        page.goto(args.url)
        report(
            "after",
            failed=page.locator('[id^="task-"]').count(),
            approvals=page.locator('[id^="approval-"]').count(),
            intents=page.locator('[id^="intent-"]').count(),
            title=page.title(),
            errors=errors,
        )
        browser.close()


if __name__ == "__main__":
    main()
