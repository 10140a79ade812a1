package clob

// Losses are parts of an engine's state a loader could forget, each as a
// function that drops it from an engine. TestLoadEngineNoticesLoss applies
// each to freshly loaded engines: the continuation test must notice.
var Losses = []struct {
	Name string
	Lose func(e *Engine)
}{
	{"expiry queue", func(e *Engine) {
		for _, b := range e.books {
			b.expiry = expiryQueue{}
		}
	}},
	{"last price", func(e *Engine) {
		for _, b := range e.books {
			b.hasPrice, b.priceHalf = false, 0
		}
	}},
	{"level volumes", func(e *Engine) {
		for _, b := range e.books {
			for _, lv := range b.sides {
				for i := range lv {
					lv[i].vol = volume{}
				}
			}
		}
	}},
	{"pending transfers", func(e *Engine) { e.transfers.head, e.transfers.n = 0, 0 }},
	{"envelope count", func(e *Engine) { e.seq = 0 }},
}
