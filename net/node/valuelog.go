package node

import "time"

// valueLogGCEvery is how often the store's value log is collected
// (persist.CollectValueLog): the published ticks of busy auctions live
// there, about 5 MB/s under 1 500 ladders/s, and are deleted 80 ticks
// later.
const valueLogGCEvery = 10 * time.Second

// valueLogCollector collects the store's value log until Close. An error
// is logged and the next round tries again.
func (n *Node) valueLogCollector() {
	n.every(valueLogGCEvery, func() bool {
		if _, err := n.log.CollectValueLog(); err != nil {
			n.Logf("cannot collect the store's value log: %v", err)
		}
		return true
	})
}
