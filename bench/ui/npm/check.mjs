// Loads the node's web view in Debian's chromium (playwright-core drives
// it; it never downloads a browser), waits for the book, a candle, the
// clearings, the clock and the committee to show, checks that the book
// moves (the WebSocket feed) and that the page logged no error, and saves
// a screenshot. Usage: node check.mjs URL OUT.png [ADDRESS]
// Env CHROMIUM: the browser (default /usr/bin/chromium).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, out, address] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node check.mjs URL OUT.png [ADDRESS]');
  process.exit(2);
}
const WAIT_MS = 30000; // each element must show within this

// A fresh profile each run (playwright passes it as --user-data-dir, and
// --headless for headless: true); the flags keep chromium from reaching
// out to the network and from needing a sandbox or a GPU, as root in CI.
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
  await page.goto(url + (address ? `?address=${address}` : ''), { waitUntil: 'load' });
  const selectors = ['#bids .row', '#asks .row', '#chart .candle', '#trades tbody tr', '#committee .kv', '#summary b'];
  if (address) selectors.push('#balances div');
  for (const s of selectors) await page.waitForSelector(s, { timeout: WAIT_MS });
  for (const id of ['#tick', '#ppt']) await page.waitForFunction((sel) => document.querySelector(sel).textContent !== '–', id, { timeout: WAIT_MS });
  // The book is fed by svc_orderbook: its tick time must move.
  const before = await page.textContent('#book-time');
  await page.waitForFunction((b) => document.querySelector('#book-time').textContent !== b, before, { timeout: WAIT_MS });
  // The taker's position appears with its first fill, which can come a few
  // ticks after its first order (the makers may not quote yet): wait for
  // the position itself, which the Go test requires, not for either table.
  if (address) await page.waitForSelector('#positions tbody tr', { timeout: WAIT_MS });
  await page.waitForTimeout(1500); // a few more ticks for the picture
  const counts = await page.evaluate(() => ({
    bids: document.querySelectorAll('#bids .row').length,
    asks: document.querySelectorAll('#asks .row').length,
    candles: document.querySelectorAll('#chart .candle').length,
    clearings: document.querySelectorAll('#trades tbody tr').length,
    positions: document.querySelectorAll('#positions tbody tr').length,
    orders: document.querySelectorAll('#orders tbody tr').length,
    status: document.querySelector('#status').textContent,
  }));
  await page.screenshot({ path: out, fullPage: true });
  console.log(JSON.stringify({ ...counts, errors }));
  if (errors.length) failed = `the page reported errors: ${errors.join('; ')}`;
  else if (counts.status) failed = `the page shows an error: ${counts.status}`;
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
