package cluster

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// chainPipeline is built like raft's netPipeline: a send waits for room
// among the requests in flight, and its response waits for room among the
// answered ones, which only Consumer's reader makes.
type chainPipeline struct {
	inflight chan *raft.AppendEntriesRequest
	answered chan raft.AppendFuture
	shutdown chan struct{}
}

type answer struct{ req *raft.AppendEntriesRequest }

func (a answer) Error() error                        { return nil }
func (a answer) Start() time.Time                    { return time.Time{} }
func (a answer) Request() *raft.AppendEntriesRequest { return a.req }
func (a answer) Response() *raft.AppendEntriesResponse {
	return &raft.AppendEntriesResponse{Success: true}
}

func newChainPipeline() *chainPipeline {
	p := &chainPipeline{inflight: make(chan *raft.AppendEntriesRequest, 2), answered: make(chan raft.AppendFuture, 2), shutdown: make(chan struct{})}
	go func() { // the transport's decoder
		for {
			select {
			case req := <-p.inflight:
				select {
				case p.answered <- answer{req}:
				case <-p.shutdown:
					return
				}
			case <-p.shutdown:
				return
			}
		}
	}()
	return p
}

func (p *chainPipeline) AppendEntries(req *raft.AppendEntriesRequest, _ *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	select {
	case p.inflight <- req:
		return nil, nil
	case <-p.shutdown:
		return nil, raft.ErrPipelineShutdown
	}
}

func (p *chainPipeline) Consumer() <-chan raft.AppendFuture { return p.answered }
func (p *chainPipeline) Close() error                       { close(p.shutdown); return nil }

// sendAll sends n requests and reports whether they all returned within wait.
func sendAll(p raft.AppendPipeline, n int, wait time.Duration) bool {
	sent := make(chan struct{})
	go func() {
		for i := range n {
			_, _ = p.AppendEntries(&raft.AppendEntriesRequest{PrevLogEntry: uint64(i)}, nil)
		}
		close(sent)
	}()
	select {
	case <-sent:
		return true
	case <-time.After(wait):
		return false
	}
}

// TestDrainedPipeline_ASendNeverWaitsForAReaderThatIsGone is the wedge of
// hashicorp/raft issue 612: raft's reader of a pipeline's responses has
// returned, and the sends that follow must still return so that the
// replication loop can close the pipeline.
func TestDrainedPipeline_ASendNeverWaitsForAReaderThatIsGone(t *testing.T) {
	t.Parallel()
	raw := newChainPipeline()
	if sendAll(raw, 10, 300*time.Millisecond) { // it waits for ever; a moment shows it
		t.Fatal("the raw chain did not wedge: the test does not model raft's pipeline")
	}
	raw.Close()

	d := newDrainedPipeline(newChainPipeline())
	if !sendAll(d, 50, 10*time.Second) {
		t.Fatal("a send through the drained pipeline waited for a reader that was gone")
	}
	// What a late reader gets comes in order.
	for i := range 50 {
		f := <-d.Consumer()
		if got := f.Request().PrevLogEntry; got != uint64(i) {
			t.Fatalf("response %d is for request %d", i, got)
		}
	}
	closed := make(chan error)
	go func() { closed <- d.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the reading")
	}
}

// TestGatedTransport_PipelinesAreDrained checks that the node's transport
// hands raft the drained pipeline.
func TestGatedTransport_PipelinesAreDrained(t *testing.T) {
	t.Parallel()
	peer, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	self, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedTransport{NetworkTransport: self}
	defer g.Close()
	p, err := g.AppendEntriesPipeline("peer", peer.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, ok := p.(*drainedPipeline); !ok {
		t.Fatalf("the transport's pipeline is a %T", p)
	}
}
