// ledgerd strategy report: one account's lab_strategyReport (docs/lab.md),
// read over JSON-RPC and drawn by hand: the PnL split, activity, markouts,
// the markets and a chart of PnL and inventory over time. The JSON and CSV
// buttons are the REST export of the same report (GET /v1/lab/report/…).
'use strict';

const REFRESH_MS = 5000;
const $ = (id) => document.getElementById(id);

async function rpc(method, params = []) {
  const res = await fetch('/', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const msg = await res.json();
  if (msg.error) throw new Error(`${msg.error.message}${msg.error.data ? ' — ' + JSON.stringify(msg.error.data) : ''}`);
  return msg.result;
}

const report = (account, fromUs) => rpc('lab_strategyReport', [fromUs ? { account, from: fromUs } : { account }]);

// Amounts arrive as exact decimal strings in quote units ("-12.5"): shown
// with two decimals, four below 10 (a fee of 0.0022 is not "-0.00"),
// coloured by sign.
function num(s, digits) {
  const v = Number(s);
  const d = digits ?? (Math.abs(v) < 10 ? 4 : 2);
  return Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '–';
}
const sign = (s) => (Number(s) > 0 ? 'up' : Number(s) < 0 ? 'down' : '');
const pct = (f) => (f == null ? '–' : (100 * f).toFixed(1) + ' %');
const time = (us) => new Date(us / 1000).toISOString().slice(11, 19);

function card(label, value, cls = '') {
  const d = document.createElement('div');
  d.innerHTML = `<span></span><b class="${cls}"></b>`;
  d.firstChild.textContent = label;
  d.lastChild.textContent = value;
  return d;
}

function row(tbody, cells) {
  const tr = tbody.insertRow();
  for (const [text, cls] of cells) {
    const td = tr.insertCell();
    td.textContent = text;
    if (cls) td.className = cls;
  }
}

function draw(r) {
  $('span').textContent = `${time(r.from)} – ${time(r.to)} UTC`;
  const p = r.pnl;
  $('pnl').replaceChildren(
    card('total', num(p.total), sign(p.total)), card('spread capture', num(p.spread_capture), sign(p.spread_capture)),
    card('fees', num(p.fees), sign(p.fees)), card('funding', num(p.funding), sign(p.funding)),
    card('inventory', num(p.inventory), sign(p.inventory)), card('max drawdown', num(r.max_drawdown), 'down'));
  $('activity').replaceChildren(card('fills', `${r.fills} (${r.maker_fills} maker, ${r.taker_fills} taker)`),
    card('volume', num(r.volume)), card('fill ratio', pct(r.fill_ratio)));
  const mk = $('markouts').tBodies[0];
  mk.replaceChildren();
  for (const m of r.markouts) {
    row(mk, [[`+${m.horizon_ms / 1000} s`], [m.fills], [m.pending], [num(m.pnl), sign(m.pnl)], [Number(m.avg_bps).toFixed(2), sign(m.avg_bps)]]);
  }
  const ms = $('markets').tBodies[0];
  ms.replaceChildren();
  for (const m of r.markets) {
    const q = m.pnl;
    row(ms, [[m.market], [num(q.total), sign(q.total)], [num(q.spread_capture), sign(q.spread_capture)], [num(q.fees), sign(q.fees)],
      [num(q.funding), sign(q.funding)], [num(q.inventory), sign(q.inventory)], [m.fills], [num(m.volume)], [pct(m.fill_ratio)],
      [pct(m.top_of_book.bid)], [pct(m.top_of_book.ask)], [`${num(m.inventory_start, 3)} → ${num(m.inventory_end, 3)}`]]);
  }
  chart(r);
  const base = `/v1/lab/report/${r.account}?from=${r.from}&to=${r.to}`;
  $('json').href = base + '&format=json';
  $('csv').href = base + '&format=csv';
  $('series-csv').href = base + '&format=csv&series=1';
}

// chart draws total PnL (top two thirds, its own axis) and each market's
// inventory (bottom third, each scaled to its largest size) against time.
function chart(r) {
  const svg = $('series'), W = 800, H = 360, L = 8, R = 64, top = 10, mid = 240, bottom = 350;
  const s = r.series;
  const parts = [];
  if (s.length < 2) {
    svg.innerHTML = '<text x="400" y="180" text-anchor="middle">no fills in this window yet</text>';
    return;
  }
  const t0 = s[0].t, t1 = s[s.length - 1].t || t0 + 1;
  const x = (t) => L + (W - L - R) * (t - t0) / Math.max(1, t1 - t0);
  const pnl = s.map((e) => Number(e.pnl));
  let lo = Math.min(0, ...pnl), hi = Math.max(0, ...pnl);
  if (hi === lo) hi = lo + 1;
  const y = (v) => top + (mid - top) * (hi - v) / (hi - lo);
  for (const v of [lo, 0, hi]) {
    parts.push(`<line class="grid" x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}"/><text x="${W - R + 4}" y="${y(v) + 4}">${num(v)}</text>`);
  }
  parts.push(`<polyline class="pnl" points="${s.map((e, i) => `${x(e.t)},${y(pnl[i])}`).join(' ')}"/>`);
  const markets = Object.keys(s[s.length - 1].inventory || {});
  markets.forEach((name, k) => {
    const inv = s.map((e) => Number((e.inventory || {})[name] || 0));
    const big = Math.max(1e-18, ...inv.map(Math.abs));
    const yi = (v) => (mid + bottom) / 2 - ((bottom - mid) / 2 - 4) * v / big;
    parts.push(`<polyline class="inv inv${k % 4}" points="${s.map((e, i) => `${x(e.t)},${yi(inv[i])}`).join(' ')}"/>`);
    parts.push(`<text class="label inv${k % 4}" x="${L + 4}" y="${mid + 14 + 12 * k}">${name} inventory, ±${num(big, 3)}</text>`);
  });
  parts.push(`<line class="grid" x1="${L}" x2="${W - R}" y1="${(mid + bottom) / 2}" y2="${(mid + bottom) / 2}"/>`);
  parts.push(`<text x="${L}" y="${H - 2}">${time(t0)}</text><text x="${W - R}" y="${H - 2}" text-anchor="end">${time(t1)}</text>`);
  svg.innerHTML = parts.join('');
}

let timer = 0;

async function show() {
  clearTimeout(timer);
  const account = $('address').value.trim();
  $('report-error').textContent = '';
  if (!/^0x[0-9a-fA-F]{40}$/.test(account)) {
    $('report-error').textContent = 'want a 0x address of 40 hex digits';
    return;
  }
  const url = new URL(location.href);
  url.searchParams.set('address', account);
  history.replaceState(null, '', url);
  try {
    // The window ends at the node's time, not the browser's: under a
    // scenario the venue's clock is the scenario's.
    const secs = Number($('window').value);
    const nowUs = secs ? Number(await rpc('svc_pastPerfectTime')) : 0;
    const r = await report(account, secs ? nowUs - secs * 1e6 : 0);
    draw(r);
    $('report').hidden = false;
    $('status').textContent = `lab_strategyReport read at ${new Date().toISOString().slice(11, 19)} UTC; refreshed every ${REFRESH_MS / 1000} s`;
  } catch (e) {
    $('report-error').textContent = e.message;
  }
  timer = setTimeout(show, REFRESH_MS);
}

$('report-form').addEventListener('submit', (e) => { e.preventDefault(); show(); });
const given = new URL(location.href).searchParams.get('address');
if (given) {
  $('address').value = given;
  show();
}
