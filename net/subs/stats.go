package subs

// EndReason is why a subscription ended, for the metrics (Stats.Ended).
type EndReason uint8

const (
	EndUnsubscribed EndReason = iota // eth_unsubscribe
	EndConnClosed                    // its connection closed
	EndLagged                        // closed with CodeLagged
	EndShutdown                      // closed with CodeShutdown
	EndSlow                          // closed with CodeSlow
	EndSerialize                     // closed with CodeSerialize
	EndReverted                      // closed with CodeReverted
	endReasons
)

var endReasonNames = [endReasons]string{
	EndUnsubscribed: "unsubscribed", EndConnClosed: "connection_closed", EndLagged: "lagged",
	EndShutdown: "shutdown", EndSlow: "slow", EndSerialize: "serialize",
	EndReverted: "reverted",
}

func (r EndReason) String() string { return endReasonNames[r] }

// endReasonOf maps a close code (CodeLagged … CodeReverted) to its reason.
func endReasonOf(code int) EndReason { return EndLagged + EndReason(CodeLagged-code) }

// EachChannel calls fn with every channel's name and open subscriptions.
func (st *Stats) EachChannel(fn func(channel string, open int)) {
	for c := ChannelOrderbook; c < channelEnd; c++ {
		fn(c.String(), st.ByChannel[c])
	}
}

// EachEnded calls fn with every EndReason's name and count.
func (st *Stats) EachEnded(fn func(reason string, ended uint64)) {
	for r := range endReasons {
		fn(r.String(), st.Ended[r])
	}
}
