package subs

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// Pump fans out everything published since the last call: ticks in order,
// the newest idle slot's header, then receipts, then the newest
// past-perfect time. The hub goroutine
// (Start) calls it on every wake-up; tests and benchmarks call it directly.
//
// It holds h.mu for one tick at a time: the event loops take h.mu too
// (Subscribe, Activate, DropConn), and a fan-out that keeps finding new
// ticks must not hold a loop, and every connection on it, for as long as
// it runs (under -race on a busy machine that was tens of seconds). A loop
// waits for one tick's fan-out at most. Between two ticks is the same
// point as between two Pump calls, so nothing else changes.
func (h *Hub) Pump() {
	for {
		h.mu.Lock()
		more := !h.closed && h.pumpTick()
		h.mu.Unlock()
		if !more {
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.pumpRest()
	}
}

// REQUIRES: h.mu held.
func (h *Hub) pumpLocked() {
	for h.pumpTick() {
	}
	h.pumpRest()
}

// pumpRest fans out what follows the ticks. REQUIRES: h.mu held.
func (h *Hub) pumpRest() {
	h.pumpIdleSlot()
	h.pumpReceipts()
	h.pumpPPT()
}

// pumpIdleSlot sends newHeads subscribers the header of the newest idle
// slot, unless a tick at or after it was fanned out already (headers keep
// increasing).
func (h *Hub) pumpIdleSlot() {
	h.ringMu.Lock()
	t := h.pubIdle
	h.ringMu.Unlock()
	if t.TickUs <= h.idleUs || (h.hasDone && t.TickUs <= h.doneUs) {
		return
	}
	h.idleUs = t.TickUs
	h.stats.Encodings++
	body := appendHeader(nil, &t, h.cfg.BlockUs)
	for _, s := range h.collect(ChannelNewHeads, nil, nil) {
		h.deliver(s, body)
	}
}

// pumpTick fans out the next tick, or drops the backlog of a fan-out too
// far behind; it reports whether there may be more. REQUIRES: h.mu held.
func (h *Hub) pumpTick() bool {
	mask := uint64(len(h.ticks) - 1)
	h.ringMu.Lock()
	head, first := h.tickHead, h.tickFirst
	var r *tickRec
	if h.tickNext < head && h.tickNext >= first && head-h.tickNext <= LagTicksMax {
		r = h.ticks[h.tickNext&mask]
	}
	var lastUs int64
	if head > first {
		lastUs = h.ticks[(head-1)&mask].t.TickUs
	}
	h.ringMu.Unlock()
	if h.tickNext >= head {
		return false
	}
	if r == nil {
		// Too far behind: drop the backlog for the live subscribers
		// rather than deliver it late (they resume from the replay
		// buffer), and continue from the newest tick.
		h.lagTicks(head - h.tickNext)
		h.tickNext, h.doneUs, h.hasDone = head, lastUs, true
		return false
	}
	h.fanTick(r)
	h.tickNext++
	h.doneUs, h.hasDone = r.t.TickUs, true
	if len(h.lagging) > 0 {
		h.countLag()
	}
	return true
}

// lagTicks closes every live tick-driven subscription with -32020.
func (h *Hub) lagTicks(missed uint64) {
	for c := ChannelOrderbook; c < channelEnd; c++ {
		if !c.tickDriven() {
			continue
		}
		for _, s := range h.collectAll(c) {
			if s.live {
				h.closeSub(s, CodeLagged, missed)
			}
		}
	}
}

// collectAll returns every subscription of a channel (in scratch).
func (h *Hub) collectAll(c Channel) []*sub {
	h.stamp++
	out := h.scratch[:0]
	add := func(ss []*sub) {
		for _, s := range ss {
			if s.stamp != h.stamp {
				s.stamp = h.stamp
				out = append(out, s)
			}
		}
	}
	reg := &h.regs[c]
	add(reg.all)
	for _, ss := range reg.byBook {
		add(ss)
	}
	for _, ss := range reg.byAccount {
		add(ss)
	}
	h.scratch = out
	return out
}

// collect returns the live subscriptions of channel c that may match book
// (zero hash: no book) and any of owners, each once (in scratch, valid
// until the next collect).
func (h *Hub) collect(c Channel, book *clob.Hash, owners []clob.Address) []*sub {
	h.stamp++
	out := h.scratch[:0]
	reg := &h.regs[c]
	for _, s := range reg.all {
		if s.live {
			out = append(out, s)
		}
	}
	if book != nil {
		for _, s := range reg.byBook[*book] {
			if s.live {
				out = append(out, s)
			}
		}
	}
	for _, a := range owners {
		for _, s := range reg.byAccount[a] {
			if s.live && s.stamp != h.stamp && (book == nil || s.wantsBook(*book)) {
				s.stamp = h.stamp
				out = append(out, s)
			}
		}
	}
	h.scratch = out
	return out
}

// fanTick delivers one tick to every live subscription it matches: per
// book (ascending id) the book channels, then markets, positions, and the
// tick-wide channels.
func (h *Hub) fanTick(r *tickRec) {
	tickUs := r.t.TickUs
	for i := range r.books {
		b := &r.books[i]
		for _, c := range [...]Channel{ChannelOrderbook, ChannelOrders, ChannelOrdersV2, ChannelCandles} {
			var owners []clob.Address
			if c == ChannelOrders || c == ChannelOrdersV2 {
				owners = b.ownerList()
			}
			for _, s := range h.collect(c, &b.id, owners) {
				if !s.closed && !s.skips(tickUs, b.id) {
					h.deliverBook(s, r, b)
				}
			}
		}
	}
	for i := range r.markets {
		m := &r.markets[i]
		for _, s := range h.collect(ChannelMarkets, &m.m.Config.ID, nil) {
			if r.seq >= s.stateSeq {
				h.deliver(s, h.marketBody(m))
			}
		}
	}
	for i := range r.positions {
		p := &r.positions[i]
		for _, s := range h.collect(ChannelPositions, nil, []clob.Address{p.p.Account}) {
			if r.seq >= s.stateSeq {
				h.deliver(s, h.positionsBody(p))
			}
		}
	}
	for i := range r.triggers {
		p := &r.triggers[i]
		for _, s := range h.collect(ChannelTriggers, nil, []clob.Address{p.p.Account}) {
			if r.seq >= s.stateSeq {
				h.deliver(s, h.triggersBody(p))
			}
		}
	}
	for _, c := range [...]Channel{ChannelWithdrawals, ChannelTransfers} {
		var owners []clob.Address
		if c == ChannelTransfers {
			owners = r.transferOwners()
		} else {
			owners = withdrawalOwners(r.t.Withdrawals)
		}
		for _, s := range h.collect(c, nil, owners) {
			if !s.closed && !s.skips(tickUs, clob.Hash{}) {
				h.deliverTickWide(s, r)
			}
		}
	}
	for _, s := range h.collect(ChannelNewHeads, nil, nil) {
		h.deliver(s, h.headBody(r))
	}
}

func withdrawalOwners(ws []tickrec.Withdrawal) []clob.Address {
	if len(ws) == 0 {
		return nil
	}
	out := make([]clob.Address, len(ws))
	for i := range ws {
		out[i] = ws[i].Account
	}
	return out
}

// deliverBook sends s its payload of book b of tick r, if any.
func (h *Hub) deliverBook(s *sub, r *tickRec, b *bookRec) {
	body := h.bookBody(s, r, b)
	if len(body) == 0 {
		return
	}
	if h.deliver(s, body) && s.ch == ChannelOrdersV2 {
		s.partUs, s.partBook, s.hasPart = r.t.TickUs, b.id, true
	}
}

// bookBody returns s's payload for book b of tick r (empty: nothing for
// s), encoding it at most once per tick, book and variant.
func (h *Hub) bookBody(s *sub, r *tickRec, b *bookRec) []byte {
	switch s.ch {
	case ChannelOrderbook:
		d := s.depth
		if d >= max(len(b.upd.Snapshot.Buys), len(b.upd.Snapshot.Sells)) {
			d = 0 // every published level: the same bytes as no depth
		}
		for i := range b.orderbook {
			if b.orderbook[i].depth == d {
				return b.orderbook[i].data
			}
		}
		h.stats.Encodings++
		data := appendOrderbook(nil, &b.upd.Snapshot, d)
		b.orderbook = append(b.orderbook, depthMemo{depth: d, data: data})
		return data
	case ChannelCandles:
		if !b.bt.Traded {
			return nil
		}
		if !b.candleDone {
			h.stats.Encodings++
			b.candle, b.candleDone = appendCandleTick(nil, r.t.TickUs, b.bt), true
		}
		return b.candle
	case ChannelOrders, ChannelOrdersV2:
		memo := &b.v1
		if s.ch == ChannelOrdersV2 {
			memo = &b.v2
		}
		if data, ok := (*memo)[s.key]; ok {
			return data
		}
		if *memo == nil {
			*memo = make(map[string][]byte)
		}
		h.stats.Encodings++
		var data []byte
		if s.ch == ChannelOrders {
			data = b.appendOrdersV1(nil, r.t.TickUs, s.accounts)
		} else {
			data = b.appendOrdersV2(nil, r.t.TickUs, s.accounts, len(s.accounts) == 1, &h.enc)
		}
		(*memo)[s.key] = data
		return data
	}
	return nil
}

// deliverTickWide sends s the tick-wide array of svc_withdrawals or
// svc_transfers, if any entry matches it (none: nothing is sent).
func (h *Hub) deliverTickWide(s *sub, r *tickRec) {
	memo := &r.withdrawals
	if s.ch == ChannelTransfers {
		memo = &r.transfers
	}
	data, ok := (*memo)[s.key]
	if !ok {
		if *memo == nil {
			*memo = make(map[string][]byte)
		}
		h.stats.Encodings++
		f := accountFilter(s.accounts)
		if s.ch == ChannelTransfers {
			data = appendTransfers(nil, r, f)
		} else {
			data = appendWithdrawals(nil, r.t.Withdrawals, f)
		}
		(*memo)[s.key] = data
	}
	if len(data) > 0 {
		h.deliver(s, data)
	}
}

func appendTransfers(dst []byte, r *tickRec, f accountFilter) []byte {
	n := 0
	for i := range r.t.Result.Events {
		e := &r.t.Result.Events[i]
		if e.Kind != clob.EventTransfer || (len(f) > 0 && !f.has(e.Owner) && !f.has(e.To)) {
			continue
		}
		dst = appendElemSep(dst, n)
		n++
		dst = appendTransfer(dst, r.t.TickUs, e)
	}
	if n == 0 {
		return dst
	}
	return append(dst, ']')
}

// appendElemSep opens a JSON array before its first element (n == 0) and
// separates later ones; an array with no element is never opened, so a tick
// without outcomes sends nothing.
func appendElemSep(dst []byte, n int) []byte {
	if n == 0 {
		return append(dst, '[')
	}
	return append(dst, ',')
}

func appendWithdrawals(dst []byte, ws []tickrec.Withdrawal, f accountFilter) []byte {
	n := 0
	for i := range ws {
		if !f.has(ws[i].Account) {
			continue
		}
		dst = appendElemSep(dst, n)
		n++
		dst = append(dst, ws[i].JSON...)
	}
	if n == 0 {
		return dst
	}
	return append(dst, ']')
}

func (h *Hub) marketBody(m *marketEnt) []byte {
	if m.enc == nil {
		h.stats.Encodings++
		m.enc = appendMarketEntry(nil, m.m)
	}
	return m.enc
}

func (h *Hub) positionsBody(p *posEnt) []byte {
	if p.enc == nil {
		h.stats.Encodings++
		p.enc = appendPositionsUpdate(nil, &p.p.Account, &p.p.Data)
	}
	return p.enc
}

func (h *Hub) triggersBody(p *trigEnt) []byte {
	if p.enc == nil {
		h.stats.Encodings++
		p.enc = appendTriggersUpdate(nil, &p.p.Account, p.p.Triggers)
	}
	return p.enc
}

func (h *Hub) headBody(r *tickRec) []byte {
	if !r.headDone {
		h.stats.Encodings++
		r.head, r.headDone = appendHeader(nil, r.t, h.cfg.BlockUs), true
	}
	return r.head
}

// replayTicks delivers the buffered ticks a delta subscription asked for
// with since, up to the newest tick already fanned out; the fan-out
// delivers the rest live. REQUIRES: h.mu held.
func (h *Hub) replayTicks(s *sub) {
	mask := uint64(len(h.ticks) - 1)
	for seq := s.startSeq; seq < h.tickNext && !s.closed; seq++ {
		h.ringMu.Lock()
		first := h.tickFirst
		r := h.ticks[seq&mask]
		h.ringMu.Unlock()
		if seq < first || r == nil || r.seq != seq {
			// Evicted between Subscribe and Activate.
			h.closeSub(s, CodeLagged, first-seq)
			return
		}
		if s.ch == ChannelWithdrawals || s.ch == ChannelTransfers {
			if !s.skips(r.t.TickUs, clob.Hash{}) {
				h.deliverTickWide(s, r)
			}
		} else {
			for i := range r.books {
				b := &r.books[i]
				if !s.closed && s.wantsBook(b.id) && !s.skips(r.t.TickUs, b.id) {
					h.deliverBook(s, r, b)
				}
			}
		}
		if !s.closed {
			s.squareUs, s.hasSquare = r.t.TickUs, true
		}
	}
}

// snapshotMarkets sends the latest entry of every subscribed market,
// ascending by id. REQUIRES: h.mu held.
func (h *Hub) snapshotMarkets(s *sub) {
	h.ringMu.Lock()
	s.stateSeq = h.tickHead
	ents := make([]*marketEnt, 0, len(h.latestMkt))
	for id, m := range h.latestMkt {
		if s.wantsBook(id) {
			ents = append(ents, m)
		}
	}
	h.ringMu.Unlock()
	// Markets no published tick has covered yet (none has run since start)
	// come from the node, so the snapshot names every market.
	if h.cfg.Markets != nil {
		for _, m := range h.cfg.Markets() {
			if id := m.Config.ID; s.wantsBook(id) && !hasMarket(ents, id) {
				ents = append(ents, &marketEnt{m: &m})
			}
		}
	}
	sortMarkets(ents)
	for _, m := range ents {
		if !h.deliver(s, h.marketBody(m)) {
			return
		}
	}
}

func hasMarket(ents []*marketEnt, id clob.Hash) bool {
	for _, e := range ents {
		if e.m.Config.ID == id {
			return true
		}
	}
	return false
}

func sortMarkets(ents []*marketEnt) {
	for i := 1; i < len(ents); i++ {
		for j := i; j > 0 && compareHash(ents[j].m.Config.ID, ents[j-1].m.Config.ID) < 0; j-- {
			ents[j], ents[j-1] = ents[j-1], ents[j]
		}
	}
}

// snapshotPositions sends the account's latest positions: the newest
// published, else Config.Positions, else none held.
func (h *Hub) snapshotPositions(s *sub) {
	a := s.accounts[0]
	h.ringMu.Lock()
	p := h.latestPos[a]
	s.stateSeq = h.tickHead
	h.ringMu.Unlock()
	if p != nil {
		h.deliver(s, h.positionsBody(p))
		return
	}
	ps := h.cfgPositions(a)
	h.deliverFresh(s, appendPositionsUpdate(nil, &a, &ps))
}

// snapshotTriggers sends the account's stored triggers: the newest
// published, else Config.Triggers, else none.
func (h *Hub) snapshotTriggers(s *sub) {
	a := s.accounts[0]
	h.ringMu.Lock()
	p := h.latestTrig[a]
	s.stateSeq = h.tickHead
	h.ringMu.Unlock()
	if p != nil {
		h.deliver(s, h.triggersBody(p))
		return
	}
	var ts []marketdata.Trigger
	if h.cfg.Triggers != nil {
		ts = h.cfg.Triggers(a)
	}
	h.deliverFresh(s, appendTriggersUpdate(nil, &a, ts))
}

func (h *Hub) cfgPositions(a clob.Address) marketdata.PositionsData {
	if h.cfg.Positions == nil {
		return marketdata.PositionsData{}
	}
	return h.cfg.Positions(a)
}

// pumpReceipts fans out the receipts published since the last pump.
func (h *Hub) pumpReceipts() {
	mask := uint64(len(h.rcpts) - 1)
	for {
		h.ringMu.Lock()
		head, first := h.rcptHead, h.rcptFirst
		var r Receipt
		ok := h.rcptNext < head && h.rcptNext >= first && head-h.rcptNext <= ReceiptsLagMax
		if ok {
			r = h.rcpts[h.rcptNext&mask]
		}
		var lastUs int64
		if head > first {
			lastUs = h.rcpts[(head-1)&mask].TimeUs
		}
		h.ringMu.Unlock()
		if h.rcptNext >= head {
			return
		}
		if !ok {
			missed := head - h.rcptNext
			for _, c := range [...]Channel{ChannelLogs, ChannelAccountReceipts, ChannelConfirmedReceipts} {
				for _, s := range h.collectAll(c) {
					if s.live {
						h.closeSub(s, CodeLagged, missed)
					}
				}
			}
			h.rcptNext, h.rcptUs, h.hasRcpt = head, lastUs, true
			return
		}
		h.fanReceipt(&r)
		h.rcptNext++
		if !h.hasRcpt || r.TimeUs > h.rcptUs {
			h.rcptUs, h.hasRcpt = r.TimeUs, true
		}
	}
}

// fanReceipt sends r to its subscribers, encoding the receipt and each
// log at most once, and only for a subscriber that gets it.
func (h *Hub) fanReceipt(r *Receipt) {
	var body []byte
	for _, s := range h.collect(ChannelConfirmedReceipts, nil, nil) {
		body = h.deliverReceipt(s, r, body)
	}
	owners := [2]clob.Address{r.From, r.To}
	n := 1
	if r.HasTo && r.To != r.From {
		n = 2
	}
	for _, s := range h.collect(ChannelAccountReceipts, nil, owners[:n]) {
		body = h.deliverReceipt(s, r, body)
	}
	if h.regs[ChannelLogs].empty() {
		return
	}
	for i := range r.Body.LogCount() {
		l := r.Body.Log(i, h.topics[:0])
		h.topics = l.Topics
		var js []byte
		for _, s := range h.collect(ChannelLogs, nil, []clob.Address{l.Address}) {
			if s.closed || r.Attestations < s.logs.minAttestations || !s.logs.matches(&l) {
				continue
			}
			if js == nil {
				js = r.Body.AppendLog(nil, i)
				h.stats.Encodings++
			}
			h.deliver(s, js)
		}
	}
}

// deliverReceipt sends r to s unless s's since excludes it; body is r's
// JSON when encoded already (nil: not yet), and is returned encoded once
// sent.
func (h *Hub) deliverReceipt(s *sub, r *Receipt, body []byte) []byte {
	if s.closed || (s.hasSince && r.TimeUs <= s.since) {
		return body
	}
	if body == nil {
		body = r.Body.AppendReceipt(nil)
		h.stats.Encodings++
	}
	h.deliver(s, body)
	return body
}

// replayReceipts sends the retained receipts after since (already fanned
// out), for the receipt channels' since cursor.
func (h *Hub) replayReceipts(s *sub) {
	if !s.hasSince || s.ch == ChannelLogs {
		return
	}
	mask := uint64(len(h.rcpts) - 1)
	h.ringMu.Lock()
	first := h.rcptFirst
	h.ringMu.Unlock()
	for seq := max(first, 0); seq < h.rcptNext && !s.closed; seq++ {
		h.ringMu.Lock()
		if seq < h.rcptFirst {
			h.ringMu.Unlock()
			continue
		}
		r := h.rcpts[seq&mask]
		h.ringMu.Unlock()
		if s.ch == ChannelAccountReceipts && r.From != s.accounts[0] && !(r.HasTo && r.To == s.accounts[0]) {
			continue
		}
		h.deliverReceipt(s, &r, nil)
	}
}

// pumpPPT sends the newest past-perfect time to the subscriptions waiting
// for a time at or before it.
func (h *Hub) pumpPPT() {
	h.ringMu.Lock()
	us := h.pubPPT
	h.ringMu.Unlock()
	if us <= h.pptUs {
		return
	}
	h.pptUs = us
	h.stats.Encodings++
	h.pptBody = jsonrpc.AppendQuantity(nil, uint64(us))
	for _, s := range h.collect(ChannelPastPerfectTime, nil, nil) {
		if us >= s.pptUs {
			h.deliver(s, h.pptBody)
		}
	}
}
