package marketdata

import (
	"errors"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// TestReportHistoryBound: once an account's fills history is full
// (FillsPerAccount), a window reaching back to its oldest kept tick is
// refused, the default window starts after it and says the history is
// incomplete; a full ring of samples refuses a window before its oldest;
// a window whose from is after to is refused.
func TestReportHistoryBound(t *testing.T) {
	x := aliceBuying(FillsPerAccount+1, FillsPerAccount+1)
	oldest := x.fills[alice].at(0).TickUs // the second tick's: the first row is forgotten
	if _, err := x.Report(&ReportQuery{Owner: alice, HasFrom: true, FromUs: oldest}); !errors.Is(err, ErrReportHistory) {
		t.Fatalf("from at the oldest kept tick: %v", err)
	}
	rep, err := x.Report(&ReportQuery{Owner: alice})
	if err != nil || rep.FromUs != oldest+1 || rep.Complete || rep.Total.Fills != FillsPerAccount-1 {
		t.Fatalf("default window: %+v %v", rep, err)
	}
	if _, err := x.Report(&ReportQuery{Owner: alice, HasFrom: true, FromUs: x.nowUs + 1}); !errors.Is(err, ErrReportWindow) {
		t.Fatalf("from after the latest tick: %v", err)
	}
	// Samples: the ring full, a window from before its oldest is refused.
	for i := range SamplesPerBook {
		x.Tick(mkTick(int64(FillsPerAccount+2+i)*1000, bookTick{book: bookA}))
	}
	first := x.books[bookA].samples.at(0).TickUs
	if _, err := x.Report(&ReportQuery{Owner: alice, HasFrom: true, FromUs: first}); !errors.Is(err, ErrReportHistory) {
		t.Fatalf("from at the oldest sample: %v", err)
	}
	if _, err := x.Report(&ReportQuery{Owner: alice, HasFrom: true, FromUs: first + 1}); err != nil {
		t.Fatalf("from after the oldest sample: %v", err)
	}
}

// aliceBuying is an index on a moving book (every tick keeps a sample)
// after ticks ticks 1 ms apart, alice buying 0.1 in each of the first
// fills of them.
func aliceBuying(ticks, fills int) *Index {
	x := New(&movingBook{})
	x.AddMarket(marketA())
	e := fillEv(1, e17, e17, e17, e17, false)
	e.Owner, e.Side = alice, clob.Buy
	for i := range ticks {
		bt := bookTick{book: bookA, price: e18}
		if i < fills {
			bt.volume, bt.events = e17, []clob.Event{e}
		}
		x.Tick(mkTick(int64(i+1)*1000, bt))
	}
	return x
}
