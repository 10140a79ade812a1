// Loads the web view's strategy report (/ui/report.html) for an account in
// Debian's chromium, waits for its PnL cards, markouts, markets and the
// PnL/inventory chart, and prints what it shows (the Go test compares it
// with lab_strategyReport) with a screenshot.
// Usage: node report.mjs URL OUT.png ADDRESS
import { WAIT_MS, inBrowser } from './browser.mjs';

const [url, out, address] = process.argv.slice(2);
if (!url || !out || !address) {
  console.error('usage: node report.mjs URL OUT.png ADDRESS');
  process.exit(2);
}
await inBrowser(`${url}report.html?address=${address}`, out, async (page) => {
  for (const s of ['#pnl div', '#markouts tbody tr', '#markets tbody tr', '#series polyline.pnl']) {
    await page.waitForSelector(s, { timeout: WAIT_MS });
  }
  return page.evaluate(() => ({
    cards: [...document.querySelectorAll('#pnl div')].map((d) => [d.firstChild.textContent, d.lastChild.textContent]),
    markouts: document.querySelectorAll('#markouts tbody tr').length,
    markets: [...document.querySelectorAll('#markets tbody tr')].map((r) => r.cells[0].textContent),
    fills: document.querySelector('#activity b').textContent,
    csv: document.querySelector('#csv').getAttribute('href'),
    status: document.querySelector('#report-error').textContent,
  }));
});
