// Runs one check in Debian's chromium, driven by playwright-core (it never
// downloads a browser): a fresh profile each run, the page's console
// errors, page errors and failed requests collected, and a screenshot.
// Env CHROMIUM: the browser (default /usr/bin/chromium).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const WAIT_MS = 30000; // each element must show within this

// inBrowser opens url, runs check(page) → counts, saves a full-page
// screenshot to out and prints {...counts, errors} as one JSON line; it
// exits 1 with the reason when the check throws, the page logged an error
// or its #status line shows one (errorStatus(text) true).
export async function inBrowser(url, out, check, errorStatus = (s) => s !== '') {
  // playwright passes the profile as --user-data-dir, and --headless; the
  // flags keep chromium from reaching out to the network and from needing
  // a sandbox or a GPU, as root in CI.
  const profile = mkdtempSync(join(tmpdir(), 'ledgerd-ui-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 980 },
  });
  const errors = [];
  let failed = null;
  try {
    const page = context.pages()[0] ?? await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    page.on('requestfailed', (r) => errors.push(`request ${r.url()}: ${r.failure()?.errorText}`));
    await page.goto(url, { waitUntil: 'load' });
    const counts = await check(page);
    await page.screenshot({ path: out, fullPage: true });
    console.log(JSON.stringify({ ...counts, errors }));
    if (errors.length) failed = `the page reported errors: ${errors.join('; ')}`;
    else if (errorStatus(counts.status)) failed = `the page shows an error: ${counts.status}`;
  } catch (e) {
    const status = await context.pages()[0]?.textContent('#status', { timeout: 1000 }).catch(() => '');
    failed = `${e.message}\nerrors so far: ${errors.join('; ')}\nthe page's status line: ${status}`;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  if (failed) {
    console.error(failed);
    process.exit(1);
  }
}
