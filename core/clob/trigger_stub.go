package clob

// SKELETON (helper B replaces this file).

// AppendTriggers appends the owner's stored triggers, books ascending, then
// ids ascending.
func (e *Engine) AppendTriggers(dst []TriggerInfo, owner Address) []TriggerInfo { return dst }

// checkTrigger validates trigger intent i (submit, cancel, update) and
// records its plan.
func (e *Engine) checkTrigger(a *Admission, in *Intent, i int, p *plan, acc Accounts) Reason {
	return ReasonMalformed
}

// applyTrigger carries out a validated trigger intent at admission and
// fills its pending ring entry q.
func (e *Engine) applyTrigger(a *Admission, in *Intent, p *plan, q *pendingIntent, acc Accounts) {}

// drainTrigger runs a trigger intent at its tick.
func (e *Engine) drainTrigger(b *book, p *pendingIntent, tickUs int64, late bool, acc Accounts, out *TickResult) {
}

// fireTriggers fires, after the liquidation pass, every trigger whose
// condition holds at its book's new mark (b.perp.markSteps).
func (e *Engine) fireTriggers(tickUs int64, acc Accounts, out *TickResult) {}

// cancelTriggersOf cancels every trigger of owner (liquidation).
func (e *Engine) cancelTriggersOf(owner Address, out *TickResult) {}

func (e *Engine) appendTriggers(dst []byte) []byte { return dst }
func (e *Engine) loadTriggers(r *snapReader)       {}
