package node

import "time"

// valueLogGCEvery is how often the store's value log is collected
// (persist.CollectValueLog): snapshots of 1 MB and more live there and are
// deleted as newer ones are stored.
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
