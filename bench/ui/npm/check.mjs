// Loads the node's web view in Debian's chromium (playwright-core drives
// it; it never downloads a browser), waits for the book, a candle, the
// clearings, the clock and the committee to show, checks that the book
// moves (the WebSocket feed) and that the page logged no error, and saves
// a screenshot. Usage: node check.mjs URL OUT.png [ADDRESS]
// Env CHROMIUM: the browser (default /usr/bin/chromium; browser.mjs).
import { WAIT_MS, inBrowser } from './browser.mjs';

const [url, out, address] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node check.mjs URL OUT.png [ADDRESS]');
  process.exit(2);
}
await inBrowser(url + (address ? `?address=${address}` : ''), out, async (page) => {
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
  return counts;
});
