// ledgerd live view. A client of the node like any bot: reads are JSON-RPC
// over HTTP POST (rpc, rpcBatch), everything that moves comes from
// eth_subscribe over one WebSocket on the same origin (class Subs). Only
// what has no subscription channel is polled: svc_metrics (validator
// uptime, latency), eth_getBalance. Numbers on the wire are 18-decimal
// integers (hex quantities, or decimal strings); BigInt keeps them exact.
'use strict';

const BOOK_DEPTH = 12;          // levels per side
const TRADES_KEPT = 60;         // clearings kept in the list
const CANDLES_SHOWN = 60;       // buckets on the chart's time axis, at most
const CANDLES_MIN_SLOTS = 24;   // and at least
const METRICS_EVERY_MS = 2000;  // svc_metrics has no channel: poll it
const RESOLUTIONS = { '1m': 60e6, '5m': 300e6, '15m': 900e6, '1h': 3600e6, '4h': 14400e6, '1d': 86400e6 }; // µs; ob_getCandles' set

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- JSON-RPC
let nextId = 1;

async function post(body) {
  const res = await fetch('/', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.json();
}

function unwrap(method, msg) {
  if (msg.error) throw new Error(`${method}: ${msg.error.message}${msg.error.data ? ' — ' + JSON.stringify(msg.error.data) : ''}`);
  return msg.result;
}

// rpc('ob_getMarkets') → result, or throws with the node's error.
async function rpc(method, params = []) {
  return unwrap(method, await post({ jsonrpc: '2.0', id: nextId++, method, params }));
}

// rpcBatch([[method, params], …]) → results in order: one request, answered
// together (a consistent view, e.g. candles and the book's tick time).
async function rpcBatch(calls) {
  const first = nextId;
  nextId += calls.length;
  const answers = await post(calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: first + i, method, params })));
  const byId = new Map(answers.map((a) => [a.id, a]));
  return calls.map(([method], i) => unwrap(method, byId.get(first + i)));
}

// ------------------------------------------------------------ eth_subscribe
// How the node's subscriptions work, in four lines:
//   → {"id":7,"method":"eth_subscribe","params":["svc_orderbook",{"orderbook_ids":["0x…01"],"depth":12}]}
//   ← {"id":7,"result":"0x2a"}                                       (the subscription id)
//   ← {"method":"eth_subscription","params":{"subscription":"0x2a","result":{…}}}   (each update)
//   → {"id":8,"method":"eth_unsubscribe","params":["0x2a"]}
// A server-initiated close arrives as params.error instead of result; this
// class then subscribes again. Channels used here: svc_markets,
// svc_orderbook, svc_candles, svc_positions, svc_orders, newHeads,
// svc_pastPerfectTime (net/subs documents them all).
class Subs {
  constructor(url) {
    this.url = url;
    this.subs = new Set();     // {type, params, onData, id}
    this.byId = new Map();     // subscription id → sub
    this.calls = new Map();    // request id → sub awaiting its id
    this.connect();
  }

  connect() {
    this.ws = new WebSocket(this.url);
    this.ws.onopen = () => {
      setConn('live', 'live');
      for (const sub of this.subs) this.send(sub);   // (re)subscribe everything
    };
    this.ws.onclose = () => {
      setConn('down', 'reconnecting…');
      this.byId.clear();
      this.calls.clear();
      setTimeout(() => this.connect(), 1000);
    };
    this.ws.onmessage = (ev) => this.receive(JSON.parse(ev.data));
  }

  send(sub) {
    if (this.ws.readyState !== WebSocket.OPEN) return;   // sent on open
    const id = nextId++;
    this.calls.set(id, sub);
    const params = sub.params === undefined ? [sub.type] : [sub.type, sub.params];
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params }));
  }

  receive(msg) {
    if (msg.method === 'eth_subscription') {
      const sub = this.byId.get(msg.params.subscription);
      if (!sub) return;                                   // unsubscribed meanwhile
      if (msg.params.error?.code === -32024) {            // the node's state was reverted or loaded:
        location.reload();                                // what the page shows is history no more
        return;
      }
      if (msg.params.error) {                             // closed by the node (lag, slow reader)
        this.byId.delete(sub.id);
        if (this.subs.has(sub)) this.send(sub);
        return;
      }
      sub.onData(msg.params.result);
      return;
    }
    const sub = this.calls.get(msg.id);
    if (!sub) return;                                     // an eth_unsubscribe answer
    this.calls.delete(msg.id);
    if (msg.error) {
      this.subs.delete(sub);
      (sub.onError ?? showError)(new Error(`eth_subscribe ${sub.type}: ${msg.error.message} ${JSON.stringify(msg.error.data ?? '')}`));
    } else if (this.subs.has(sub)) {
      sub.id = msg.result;
      this.byId.set(sub.id, sub);
    } else {
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'eth_unsubscribe', params: [msg.result] }));
    }
  }

  // subscribe('svc_candles', {orderbook_ids: [id]}, onData) → sub, for unsubscribe.
  subscribe(type, params, onData, opts = {}) {
    const sub = { type, params, onData, ...opts };
    this.subs.add(sub);
    this.send(sub);
    return sub;
  }

  unsubscribe(sub) {
    if (!sub || !this.subs.delete(sub)) return;
    if (sub.id && this.byId.delete(sub.id) && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'eth_unsubscribe', params: [sub.id] }));
    }
  }
}

// ---------------------------------------------------------------- numbers
const big = (v) => (v === null || v === undefined ? null : BigInt(v));   // "0x…" and decimal strings alike
const ONE = 10n ** 18n;

// units(x, dp): an 18-decimal integer as a decimal with dp places, exact.
function units(x, dp) {
  if (x === null) return '–';
  const neg = x < 0n;
  if (neg) x = -x;
  const q = 10n ** BigInt(18 - dp);
  x = (x + q / 2n) / q;                                  // round half up
  let s = x.toString().padStart(dp + 1, '0');
  const whole = s.slice(0, s.length - dp).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  s = dp > 0 ? whole + '.' + s.slice(s.length - dp) : whole;
  return (neg ? '-' : '') + s;
}

const float = (x) => Number(x) / 1e18;                   // for drawing only
const decimalsOf = (step) => Math.max(0, 18 - (big(step).toString().length - 1));   // 1e16 → 2
const clock = (us) => new Date(Number(us) / 1000).toISOString().slice(11, 23);       // HH:MM:SS.mmm UTC

// ------------------------------------------------------------------- state
const view = {
  markets: new Map(),  // id → ob_getMarkets entry
  market: null,        // selected id
  res: '1m',
  candles: [],         // oldest first: {t, o, h, l, c, v} (BigInt prices)
  candlesAsOf: 0,      // tick time the history covers; later ticks fold in
  trades: [],          // newest first
  marketSubs: [],
  account: null, accountSubs: [],
};

let subs;

function setConn(cls, text) { const el = $('conn'); el.className = 'pill ' + cls; el.textContent = text; }

function showError(err) { console.warn(err); $('status').textContent = String(err.message ?? err); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function tableRows(tbody, rows) {
  tbody.replaceChildren(...rows.map((cells) => {
    const tr = el('tr');
    for (const c of cells) tr.append(Array.isArray(c) ? el('td', c[1], c[0]) : el('td', '', c));
    return tr;
  }));
}

const market = () => view.markets.get(view.market);
const priceDp = () => decimalsOf(market().tick_precision);
const sizeDp = () => decimalsOf(market().lot_size);

// ----------------------------------------------------------------- markets
async function start() {
  subs = new Subs((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/');
  for (const m of await rpc('ob_getMarkets')) view.markets.set(m.id, m);
  for (const r of Object.keys(RESOLUTIONS)) {
    const b = el('button', '', r);
    b.onclick = () => { view.res = r; loadCandles().catch(showError); };
    $('resolutions').append(b);
  }
  renderMarketButtons();
  // One subscription for every market's entry: last price, 24h figures, perp marks.
  subs.subscribe('svc_markets', {}, (m) => {
    view.markets.set(m.orderbook, { ...view.markets.get(m.orderbook), ...m });
    renderMarketButtons();
    if (m.orderbook === view.market) renderSummary();
  });
  // The tick clock: a header per auction tick (and per idle slot), and the
  // past-perfect time, the point up to which the venue's history is final.
  subs.subscribe('newHeads', undefined, (h) => { $('tick').textContent = `#${Number(h.number)} · ${clock(Number(h.timestamp) * 1e6).slice(0, 8)}`; });
  subs.subscribe('svc_pastPerfectTime', 0, (t) => { $('ppt').textContent = clock(BigInt(t)); });
  startCommittee().catch(showError);
  selectMarket(new URLSearchParams(location.search).get('market') ?? [...view.markets.keys()][0]);
  $('account-form').onsubmit = (ev) => { ev.preventDefault(); showAccount($('address').value.trim()); };
  const addr = new URLSearchParams(location.search).get('address');
  if (addr) { $('address').value = addr; showAccount(addr); }
}

function renderMarketButtons() {
  const nav = $('markets');
  nav.replaceChildren(...[...view.markets.values()].map((m) => {
    const b = el('button', m.id === view.market ? 'on' : '', m.name);
    b.append(el('small', '', m.last_clearing_price ? units(big(m.last_clearing_price), decimalsOf(m.tick_precision)) : ''));
    b.onclick = () => selectMarket(m.id);
    return b;
  }));
}

function renderSummary() {
  const m = market();
  const dp = priceDp();
  const items = [
    ['market', `${m.name} (${m.market_type})`],
    ['last', units(big(m.last_clearing_price), dp)],
    ['24h change', `${(m.price_change_24h / 100).toFixed(2)} %`],
    ['24h high', units(big(m.high_24h), dp)],
    ['24h low', units(big(m.low_24h), dp)],
    ['24h volume', `${units(big(m.volume_24h), sizeDp())} ${m.base_token_symbol}`],
    ['auction', `${m.auction_interval / 1000} ms`],
  ];
  if (m.market_type === 'perpetual') {
    items.push(['oracle', units(big(m.oracle_price), dp)], ['mark', units(big(m.mark_price), dp)],
      ['funding rate', `${(Number(m.funding_rate) / 1e16).toFixed(4)} %`],
      ['open interest', `${units(big(m.open_interest), sizeDp())} ${m.base_token_symbol}`]);
  }
  $('summary').replaceChildren(...items.map(([k, v]) => { const d = el('div'); d.append(el('span', '', k), el('b', '', v)); return d; }));
}

function selectMarket(id) {
  if (!view.markets.has(id)) id = [...view.markets.keys()][0];
  for (const s of view.marketSubs) subs.unsubscribe(s);
  view.market = id;
  view.trades = [];
  renderMarketButtons();
  renderSummary();
  renderTrades();
  loadCandles().then(() => {
    if (view.market !== id) return;                       // the user moved on
    // Live book: the whole aggregated book (cut to depth) after each tick it ran in.
    const book = subs.subscribe('svc_orderbook', { orderbook_ids: [id], depth: BOOK_DEPTH }, renderBook);
    // One frame per tick that traded: the clearing price and volume. `since`
    // replays the last minute from the node's buffer, so the list starts
    // full; a since older than the buffer (a node that just restarted) is
    // refused with -32602, and then the list starts empty.
    const live = () => subs.subscribe('svc_candles', { orderbook_ids: [id] }, onClearing);
    const ticks = subs.subscribe('svc_candles', { orderbook_ids: [id], since: Math.max(0, view.candlesAsOf - 60e6) }, onClearing,
      { onError: () => { view.marketSubs.push(live()); } });
    view.marketSubs = [book, ticks];
  }).catch(showError);
}

// --------------------------------------------------------------- the book
function renderBook(b) {
  if (b.orderbook_id !== view.market) return;
  const dp = priceDp(), sdp = sizeDp();
  const side = (levels, asc) => Object.entries(levels)
    .map(([p, l]) => [BigInt(p), big(l.volume)])
    .sort((a, c) => (asc ? (a[0] < c[0] ? -1 : 1) : (a[0] > c[0] ? -1 : 1)))
    .slice(0, BOOK_DEPTH);
  const asks = side(b.sells, true), bids = side(b.buys, false);
  const cum = (levels) => { let t = 0n; return levels.map(([p, v]) => [p, v, (t += v)]); };
  const a = cum(asks), d = cum(bids);
  const max = [...a, ...d].reduce((m, x) => (x[2] > m ? x[2] : m), 1n);
  const rows = (levels) => levels.map(([p, v, t]) => {
    const r = el('div', 'row');
    const bar = el('span', 'bar');
    bar.style.width = `${Number((t * 1000n) / max) / 10}%`;   // depth bar: cumulative size
    r.append(bar, el('span', 'price', units(p, dp)), el('span', '', units(v, sdp)), el('span', '', units(t, sdp)));
    return r;
  });
  $('asks').replaceChildren(...rows(a).reverse());           // best ask nearest the middle
  $('bids').replaceChildren(...rows(d));
  const spread = asks.length && bids.length ? ` · spread ${units(asks[0][0] - bids[0][0], dp)}` : '';
  const oracle = b.oracle_price ? ` · oracle ${units(big(b.oracle_price), dp)}` : '';
  $('mid').textContent = `clearing ${units(big(b.clearing_price), dp)}${spread}${oracle}`;
  $('book-time').textContent = `tick ${clock(b.timestamp)}`;
}

// ------------------------------------------------------------- clearings
function onClearing(c) {
  // A resubscription (reconnect, lag) replays from `since`: skip what we have.
  if (c.orderbook !== view.market || (view.trades.length && c.timestamp_us <= view.trades[0].t)) return;
  const tick = { t: c.timestamp_us, p: big(c.price), v: big(c.volume) };
  view.trades.unshift(tick);
  view.trades.length = Math.min(view.trades.length, TRADES_KEPT);
  renderTrades();
  if (tick.t > view.candlesAsOf) { foldCandle(tick); drawChart(); }   // the history has the older ones
}

function renderTrades() {
  const dp = view.market ? priceDp() : 0, sdp = view.market ? sizeDp() : 0;
  tableRows($('trades').tBodies[0], view.trades.map((t, i) => {
    const prev = view.trades[i + 1];
    const dir = !prev || t.p === prev.p ? '' : t.p > prev.p ? 'up' : 'down';
    return [clock(t.t), [units(t.p, dp), dir], units(t.v, sdp)];
  }));
}

// ---------------------------------------------------------------- candles
// History from ob_getCandles, then each clearing folds into its bucket as
// the node does (core/marketdata candleRing.add). The history and the book's
// tick time come in one batch: ticks after that time are folded, earlier
// ones are already in the history.
async function loadCandles() {
  const id = view.market, width = RESOLUTIONS[view.res];
  for (const b of $('resolutions').children) b.classList.toggle('on', b.textContent === view.res);
  const [list, book] = await rpcBatch([
    ['ob_getCandles', [id, { resolution: view.res, from_ts: 0, limit: CANDLES_SHOWN }]],
    ['ob_getOrderbook', [id, 1]],
  ]);
  if (id !== view.market || width !== RESOLUTIONS[view.res]) return;   // the user moved on
  view.candles = list.reverse().map((k) => ({ t: k.timestamp, o: big(k.open), h: big(k.high), l: big(k.low), c: big(k.close), v: big(k.volume) }));
  view.candlesAsOf = book.timestamp;
  drawChart();
}

function foldCandle({ t, p, v }) {
  const width = RESOLUTIONS[view.res];
  const start = t - (t % width);
  const last = view.candles[view.candles.length - 1];
  if (last && last.t === start) {
    if (p > last.h) last.h = p;
    if (p < last.l) last.l = p;
    last.c = p;
    last.v += v;
  } else if (!last || start > last.t) {
    view.candles.push({ t: start, o: p, h: p, l: p, c: p, v });
    if (view.candles.length > CANDLES_SHOWN) view.candles.shift();
  }
}

// drawChart draws the candles by hand in SVG: a time axis of buckets ending
// at the newest, price grid and labels on the right, wicks
// (line) and bodies (rect), volume bars under the prices, a dashed line at
// the last price. Every candle is a <g class="candle">.
function drawChart() {
  const svg = $('chart');
  const W = 800, H = 400, R = 70, top = 10, priceH = 300, volTop = 320, volH = 56;
  const plotW = W - R;
  const ks = view.candles;
  const width = RESOLUTIONS[view.res];
  const NS = 'http://www.w3.org/2000/svg';
  const node = (tag, attrs, cls) => {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    if (cls) n.setAttribute('class', cls);
    return n;
  };
  const out = [];
  if (!ks.length) {
    out.push(node('text', { x: plotW / 2, y: H / 2, 'text-anchor': 'middle' }));
    out[0].textContent = 'no trades yet at this resolution';
    svg.replaceChildren(...out);
    return;
  }
  const newest = ks[ks.length - 1].t;
  // The axis spans the buckets the candles cover, at least CANDLES_MIN_SLOTS
  // (a young venue's few candles stay readable), at most CANDLES_SHOWN.
  const slots = Math.min(CANDLES_SHOWN, Math.max(CANDLES_MIN_SLOTS, (newest - ks[0].t) / width + 1));
  const slot = plotW / slots;
  const xOf = (t) => plotW - slot * ((newest - t) / width + 0.5);
  let lo = Infinity, hi = -Infinity, vmax = 0;
  for (const k of ks) { lo = Math.min(lo, float(k.l)); hi = Math.max(hi, float(k.h)); vmax = Math.max(vmax, float(k.v)); }
  if (hi === lo) { hi += hi * 0.001 || 1; lo -= lo * 0.001 || 1; }
  const pad = (hi - lo) * 0.08;
  hi += pad; lo -= pad;
  const yOf = (p) => top + (hi - p) / (hi - lo) * priceH;
  const dp = priceDp();
  const last = ks[ks.length - 1].c, yl = yOf(float(last));
  for (let i = 0; i <= 4; i++) {                          // price grid
    const p = lo + (hi - lo) * i / 4, y = yOf(p);
    out.push(node('line', { x1: 0, x2: plotW, y1: y, y2: y }, 'grid'));
    if (Math.abs(y - yl) < 14) continue;                  // the last price's label is there
    const label = node('text', { x: plotW + 6, y: y + 4 });
    label.textContent = p.toFixed(dp);
    out.push(label);
  }
  for (let i = 0; i < slots; i += Math.ceil(slots / 4)) { // time labels
    const t = newest - i * width, x = xOf(t);
    const label = node('text', { x, y: H - 4, 'text-anchor': 'middle' });
    label.textContent = width >= 86400e6 ? new Date(t / 1000).toISOString().slice(5, 10) : clock(t).slice(0, 5);
    out.push(label);
  }
  const bodyW = Math.max(1, slot * 0.7);
  for (const k of ks) {
    const x = xOf(k.t);
    if (x < 0) continue;
    const dir = k.c >= k.o ? 'up' : 'down';
    const g = node('g', {}, `candle ${dir}`);
    const yo = yOf(float(k.o)), yc = yOf(float(k.c));
    g.append(node('line', { x1: x, x2: x, y1: yOf(float(k.h)), y2: yOf(float(k.l)) }, dir),
      node('rect', { x: x - bodyW / 2, y: Math.min(yo, yc), width: bodyW, height: Math.max(1, Math.abs(yc - yo)) }, dir));
    const vh = vmax ? float(k.v) / vmax * volH : 0;
    g.append(node('rect', { x: x - bodyW / 2, y: volTop + volH - vh, width: bodyW, height: Math.max(0.5, vh) }, `vol ${dir}`));
    const title = node('title', {});
    title.textContent = `${clock(k.t)} O ${units(k.o, dp)} H ${units(k.h, dp)} L ${units(k.l, dp)} C ${units(k.c, dp)} V ${units(k.v, sizeDp())}`;
    g.append(title);
    out.push(g);
  }
  out.push(node('line', { x1: 0, x2: plotW, y1: yl, y2: yl }, 'last'));
  const ll = node('text', { x: plotW + 6, y: yl + 4 }, 'last-label');
  ll.textContent = units(last, dp);
  out.push(ll);
  svg.replaceChildren(...out);
}

// -------------------------------------------------------------- committee
async function startCommittee() {
  const c = await rpc('svc_getCommittee');
  const poll = async () => {
    try {
      const m = await rpc('svc_metrics');   // no channel: polled
      const kv = el('div', 'kv');
      for (const [k, v] of [['quorum', `${c.quorum_size} of ${c.replicas.length}`],
        ['validator uptime', `${(m.validator_uptime * 100).toFixed(1)} %`], ['latency', `${m.latency.toFixed(1)} ms`],
        ['throughput', `${m.throughput.toFixed(1)} tx/s`], ['gas price', `${m.gas_price} wei`]]) kv.append(el('span', '', k), el('b', '', v));
      const list = el('ul', 'replicas');
      list.append(...c.replicas.map((r) => el('li', '', r)));
      $('committee').replaceChildren(kv, list);
    } catch (err) { showError(err); }
  };
  await poll();
  setInterval(poll, METRICS_EVERY_MS);
}

// ---------------------------------------------------------------- account
function showAccount(addr) {
  $('account-error').textContent = '';
  if (!/^0x[0-9a-fA-F]{40}$/.test(addr)) { $('account-error').textContent = 'want 0x and 40 hex digits'; return; }
  for (const s of view.accountSubs) subs.unsubscribe(s);
  view.account = addr;
  $('account').hidden = false;
  const url = new URL(location.href);
  url.searchParams.set('address', addr);
  history.replaceState(null, '', url);
  $('report-link').href = 'report.html?address=' + addr;
  // svc_positions: the ob_getPositions answer at once, then after every tick
  // that touched the account (fills, transfers, marks of its perp markets).
  const positions = subs.subscribe('svc_positions', { account: addr }, (p) => renderPositions(addr, p.data));
  // svc_orders: the account's order events; each refreshes the open orders.
  const orders = subs.subscribe('svc_orders', { bidder: addr }, () => refreshOrders(addr));
  view.accountSubs = [positions, orders];
  refreshOrders(addr);
}

async function renderPositions(addr, p) {
  if (addr !== view.account) return;
  const native = await rpc('eth_getBalance', [addr, 'latest']).catch(showError);   // no channel: read with each update
  const cards = [['native (withdrawable)', `${units(big(native ?? null), 2)} USD`],
    ['account value', `${units(big(p.account_value), 2)} USD`], ['cash', `${units(big(p.cash), 2)} USD`]];
  for (const s of p.positions.filter((x) => x.kind === 'spot')) {
    cards.push([`${s.base_symbol} (locked ${units(big(s.locked_balance), 4)})`, units(big(s.balance), 4)]);
  }
  $('balances').replaceChildren(...cards.map(([k, v]) => { const d = el('div'); d.append(el('span', '', k), v); return d; }));
  tableRows($('positions').tBodies[0], p.positions.filter((x) => x.kind === 'perp').map((x) => {
    const m = view.markets.get(x.orderbook_id), dp = decimalsOf(m.tick_precision), pnl = big(x.unrealized_pnl);
    const liq = big(x.liquidation_price);
    return [m.name, [x.side, x.side === 'long' ? 'up' : 'down'], units(big(x.size), decimalsOf(m.lot_size)), units(big(x.entry_price), dp),
      units(big(x.mark_price), dp), liq ? units(liq, dp) : '–', [units(pnl, 2), pnl < 0n ? 'down' : 'up']];
  }));
}

let ordersTimer = null;
function refreshOrders(addr) {
  if (ordersTimer) return;                                // at most one read per tick
  ordersTimer = setTimeout(async () => {
    ordersTimer = null;
    if (addr !== view.account) return;
    try {
      const [pending, active] = await rpcBatch([
        ['ob_getOrders', [addr, { status: 'pending', limit: 50 }]],
        ['ob_getOrders', [addr, { status: 'active', limit: 50 }]],
      ]);
      tableRows($('orders').tBodies[0], [...pending.orders, ...active.orders].map((o) => {
        const m = view.markets.get(o.orderbook_id), size = big(o.initial_size);
        const dp = decimalsOf(m.tick_precision), sdp = decimalsOf(m.lot_size);
        return [m.name, [o.side, o.side === 'buy' ? 'up' : 'down'], units(big(o.price), dp),
          units(size < 0n ? -size : size, sdp), units(big(o.filled_base_amount), sdp), o.status];
      }));
    } catch (err) { showError(err); }
  }, 250);
}

start().catch(showError);
