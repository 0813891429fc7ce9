package fsm

import "sync"

// A node's FSM notes the results of the commands this node's writers
// proposed and still wait for, by the request id their envelope carries
// (writer.go), so that a writer whose proposal ended with an unknown outcome
// can look it up (Writer.resolve). Only those: every node applies every
// command, and keeping every result on every node would cost each apply a
// write for the few lookups one node makes, and would bound how long a
// result is kept by the write rate instead of by the writer's wait.
// Node-local: not in snapshots; a restore forgets what was noted.
type outcomes struct {
	mu       sync.Mutex
	waiting  map[string]*outcome
	restores uint64
}

type outcome struct {
	res     any
	applied bool
}

// watch starts noting the result of the command rid; forget stops.
func (o *outcomes) watch(rid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waiting == nil {
		o.waiting = map[string]*outcome{}
	}
	o.waiting[rid] = &outcome{}
}

func (o *outcomes) forget(rid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.waiting, rid)
}

// record notes the result of an applied command, if a writer waits for it.
// A batch re-applied after an abort records the same result again.
func (o *outcomes) record(rid string, res any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w := o.waiting[rid]; w != nil {
		w.res, w.applied = res, true
	}
}

func (o *outcomes) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range o.waiting {
		*w = outcome{}
	}
	o.restores++
}

// Outcome is the result this FSM gave the command with request id rid, if
// this node's writer waits for it and the FSM applied it.
func (f *FSM) Outcome(rid string) (res any, ok bool) {
	f.outcomes.mu.Lock()
	defer f.outcomes.mu.Unlock()
	if w := f.outcomes.waiting[rid]; w != nil && w.applied {
		return w.res, true
	}
	return nil, false
}

// Restores counts the restores of this FSM from a snapshot since it was
// made; each forgets the outcomes noted.
func (f *FSM) Restores() uint64 {
	f.outcomes.mu.Lock()
	defer f.outcomes.mu.Unlock()
	return f.outcomes.restores
}
