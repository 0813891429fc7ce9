package api

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"time"
)

// eventStream is an open Server-Sent Events answer (the audit and the
// data-plane event streams): the batch a loop builds, and when the client
// last got a line, for the heartbeat.
type eventStream struct {
	s     *Server
	c     *call
	rc    *http.ResponseController
	batch bytes.Buffer
	sent  time.Time
}

// startStream answers 200 with an event stream's headers, flushed, and
// counts the stream until close.
func (s *Server) startStream(c *call) *eventStream {
	rc := http.NewResponseController(c.w)
	s.streams.Add(1)
	c.wrote = true
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	return &eventStream{s: s, c: c, rc: rc, sent: time.Now()}
}

// close ends the stream's count.
func (st *eventStream) close() { st.s.streams.Add(-1) }

// send writes the batch, flushed, within streamWriteWait, when it holds
// anything or force: after a look that found no events (events 0) and
// streamHeartbeat after the last line sent, a heartbeat comment first. An
// error ends the stream; a client too slow to take the batch in time
// (os.ErrDeadlineExceeded) is counted as dropped.
func (st *eventStream) send(events int, force bool) error {
	if events == 0 && time.Since(st.sent) >= streamHeartbeat {
		st.batch.WriteString(": heartbeat\n\n")
	}
	if st.batch.Len() == 0 && !force {
		return nil
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(streamWriteWait))
	_, err := st.c.w.Write(st.batch.Bytes())
	if err == nil {
		err = st.rc.Flush()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		st.s.streamsDropped.Add(1)
	}
	if err == nil {
		st.sent = time.Now()
	}
	return err
}
