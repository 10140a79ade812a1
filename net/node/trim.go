package node

import "time"

// Mapped pages. Badger reads and writes its table files and memtable logs
// through memory mappings, and every page the node touched stays counted in
// its RSS until the machine runs short of memory: RSS would grow with the
// history on disk
// although the node holds none of it. Every Config.TrimMappedEvery the
// trimmer hands those pages back to the kernel (persist.TrimMapped), so that
// RSS shows what the node itself keeps: the ledger, the books, the caches.

// TrimMappedEveryDefault is how often the trimmer runs unless configured.
const TrimMappedEveryDefault = 15 * time.Second

// trimmer runs the trimming loop until Close. An error (a kernel without
// MADV_PAGEOUT) is logged once and ends the loop: RSS then includes the
// mapped tables, as without it.
func (n *Node) trimmer() {
	n.every(n.cfg.TrimMappedEvery, func() bool {
		if _, err := n.log.TrimMapped(); err != nil {
			n.Logf("cannot hand the store's mapped pages back to the kernel, not trying again: %v", err)
			return false
		}
		return true
	})
}

// every calls fn every d until Close, or until fn returns false.
func (n *Node) every(d time.Duration, fn func() bool) {
	defer n.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-n.quit:
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}
