package projector

import (
	"context"
	"fmt"
)

// Reconcile's evidence (docs/projector.md, "Reconcile's evidence"): was an
// event applied? Aggregate.Apply is a join, so folding an event into a
// state that already holds it changes nothing, and folding one the state
// lacks changes the state or what it contributes. Check asks exactly
// that of the projector's own fold (fold, with the projector's retention):
// an input is applied when folding it into its subject's stored state
// plans no change. It writes nothing and records nothing new.

// Verdict is what Check found for one input.
type Verdict string

const (
	// Applied: folding the input into its subject's stored state changes
	// nothing (its effect is in the state).
	Applied Verdict = "applied"
	// Missing: folding it changes the state or its contributions: it was
	// never applied. Project applies it (a join: never twice).
	Missing Verdict = "missing"
	// Late: recorded at or after its aggregate's expiry (late.go): not
	// applied by rule.
	Late Verdict = "late"
	// Quarantined: refused from the record alone (admit: future-dated, a
	// task keyed as its execution); Project dead-letters it.
	Quarantined Verdict = "quarantined"
	// Poison: its subject's fold fails (an item over a limit, a state
	// stored as another kind or that cannot be decoded); Project
	// dead-letters it.
	Poison Verdict = "poison"
)

// CheckResult is what Check found.
type CheckResult struct {
	// Verdicts[i] is the verdict of Check's inputs[i].
	Verdicts []Verdict
	// Errors maps the index of each Quarantined or Poison input to why.
	Errors map[int]error
	// Subjects is how many subjects' states were read (eventually
	// consistent); Reread how many were read again strongly consistent,
	// because some input of theirs was not applied.
	Subjects, Reread int
}

// Count is how many inputs got verdict v.
func (r CheckResult) Count(v Verdict) int {
	n := 0
	for _, got := range r.Verdicts {
		if got == v {
			n++
		}
	}
	return n
}

// Check classifies every input as Applied, Missing, Late, Quarantined or
// Poison against the stored states, read-only: it loads the states of the
// inputs' subjects (one eventually consistent read per subject), folds each
// subject's inputs as Project would, and for a subject where that fold is
// not a no-op, folds each input alone to find which. The subjects with an
// input not applied are read again strongly consistent and judged again,
// so that a commit in flight when the first read ran (a consumer running
// beside Check) is not reported missing. A store error is returned as is;
// nothing is written either way.
func (p *Projector) Check(ctx context.Context, inputs []Input) (CheckResult, error) {
	res := CheckResult{Verdicts: make([]Verdict, len(inputs)), Errors: map[int]error{}}
	bySubject := map[string][]int{}
	var subjects []string
	for i, in := range inputs {
		if err := admit(in, p.cfg.MaxFutureSkew); err != nil {
			res.Verdicts[i], res.Errors[i] = Quarantined, err
			continue
		}
		if _, ok := bySubject[in.Event.Subject]; !ok {
			subjects = append(subjects, in.Event.Subject)
		}
		bySubject[in.Event.Subject] = append(bySubject[in.Event.Subject], i)
	}
	if len(subjects) == 0 {
		return res, nil
	}
	ret := newRetention(p.cfg)
	judgeAll := func(stored map[string]StoredState, subs []string) (unsettled []string) {
		for _, s := range subs {
			idx := bySubject[s]
			ins := make([]Input, len(idx))
			for j, i := range idx {
				ins[j] = inputs[i]
			}
			verdicts, errs := judge(s, stored[s], ins, ret)
			settled := true
			for j, i := range idx {
				res.Verdicts[i] = verdicts[j]
				delete(res.Errors, i)
				if errs[j] != nil {
					res.Errors[i] = errs[j]
				}
				settled = settled && verdicts[j] == Applied
			}
			if !settled {
				unsettled = append(unsettled, s)
			}
		}
		return unsettled
	}
	stored, err := p.store.Load(ctx, subjects, false)
	if err != nil {
		return res, fmt.Errorf("projector: check: %w", err)
	}
	res.Subjects = len(subjects)
	again := judgeAll(stored, subjects)
	if len(again) == 0 {
		return res, nil
	}
	stored, err = p.store.Load(ctx, again, true)
	if err != nil {
		return res, fmt.Errorf("projector: check: %w", err)
	}
	res.Reread = len(again)
	judgeAll(stored, again)
	return res, nil
}

// judge returns the verdict of each of one subject's inputs against its
// stored state (pure). The subject's inputs are folded together first: a
// plan without a state change and without late inputs means every one is
// applied (the common case, one fold). Otherwise each is folded alone.
func judge(subject string, stored StoredState, ins []Input, ret retention) ([]Verdict, []error) {
	verdicts, errs := make([]Verdict, len(ins)), make([]error, len(ins))
	pl, err := fold(subject, stored, ins, ret)
	if err != nil {
		for j := range ins {
			verdicts[j], errs[j] = Poison, err
		}
		return verdicts, errs
	}
	if pl.state == nil && pl.late == 0 {
		for j := range ins {
			verdicts[j] = Applied
		}
		return verdicts, errs
	}
	for j, in := range ins {
		one, err := fold(subject, stored, []Input{in}, ret)
		switch {
		case err != nil:
			verdicts[j], errs[j] = Poison, err
		case one.late > 0:
			verdicts[j] = Late
		case one.state == nil:
			verdicts[j] = Applied
		default:
			verdicts[j] = Missing
		}
	}
	return verdicts, errs
}
