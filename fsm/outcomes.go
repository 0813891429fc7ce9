package fsm

import "sync"

// Every node's FSM keeps the results of the commands it applied lately, by
// the request id their envelope carries (writer.go), so that a writer whose
// proposal ended with an unknown outcome can look it up (Writer.resolve).
// They are node-local: not in snapshots, emptied by a restore.
const keptOutcomes = 1 << 14

type outcomes struct {
	mu       sync.Mutex
	byID     map[string]any
	order    []string // the ids in the order they were recorded, a ring of keptOutcomes
	next     int
	restores uint64
}

func (o *outcomes) record(rid string, res any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byID == nil {
		o.byID = make(map[string]any, keptOutcomes)
		o.order = make([]string, keptOutcomes)
	}
	if _, again := o.byID[rid]; again { // a batch re-applied after an abort: the same result
		o.byID[rid] = res
		return
	}
	if old := o.order[o.next]; old != "" {
		delete(o.byID, old)
	}
	o.order[o.next] = rid
	o.next = (o.next + 1) % keptOutcomes
	o.byID[rid] = res
}

func (o *outcomes) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.byID, o.order, o.next = nil, nil, 0
	o.restores++
}

// Outcome is the result this FSM gave the command with request id rid, if
// it applied it lately (one of the last 16,384 commands with an id).
func (f *FSM) Outcome(rid string) (res any, ok bool) {
	f.outcomes.mu.Lock()
	defer f.outcomes.mu.Unlock()
	res, ok = f.outcomes.byID[rid]
	return res, ok
}

// Restores counts the restores of this FSM from a snapshot since it was
// made; each empties the outcomes it kept.
func (f *FSM) Restores() uint64 {
	f.outcomes.mu.Lock()
	defer f.outcomes.mu.Unlock()
	return f.outcomes.restores
}
