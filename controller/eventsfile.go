package controller

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"edgectl/store"
)

// The events file (--events-file): this node appends every event, one JSON
// object per line (the API's view), for log shippers. It resumes after the
// last id in the file when the node restarts, so the file has no gap and no
// duplicate as long as the retention still holds the events in between; a
// new file starts with the events recorded from then on. At
// EventsFileMaxSize bytes it is rotated: FILE becomes FILE.1, FILE.1
// becomes FILE.2, and so on, keeping EventsFileKeep of them.

// eventsFile writes the events file.
type eventsFile struct {
	path    string
	maxSize int64
	keep    int
	f       *os.File
	w       *bufio.Writer
	size    int64
}

// startEventsFile runs the events file writer until the node stops.
func (n *Node) startEventsFile() error {
	if n.cfg.EventsFile == "" {
		return nil
	}
	ef := &eventsFile{path: n.cfg.EventsFile, maxSize: n.cfg.EventsFileMaxSize, keep: n.cfg.EventsFileKeep}
	from, err := lastIDInFile(ef.path)
	if err != nil {
		return fmt.Errorf("--events-file: %w", err)
	}
	if from < 0 {
		from = n.Store.Read().Events().LastSeq
	}
	if err := ef.open(); err != nil {
		return fmt.Errorf("--events-file: %w", err)
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer ef.close()
		for {
			tx := n.Store.Read()
			if oldest, lost := tx.EventsLost(from); lost {
				n.log.Warn("events file: events were removed by the retention before they were written", "from", from+1, "to", oldest-1)
				from = oldest - 1
			}
			wrote := 0
			var werr error
			tx.EventsAfter(from, func(e *store.Event) bool {
				if werr = ef.write(e); werr != nil {
					return false
				}
				from = e.Seq
				wrote++
				return wrote < 1000
			})
			if werr == nil {
				werr = ef.w.Flush()
			}
			if werr != nil {
				n.log.Error("events file: write failed", "path", ef.path, "error", werr)
			}
			if wrote == 1000 && werr == nil {
				continue
			}
			select {
			case <-n.stopping:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return nil
}

func (ef *eventsFile) open() error {
	f, err := os.OpenFile(ef.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	ef.f, ef.w, ef.size = f, bufio.NewWriterSize(f, 64<<10), st.Size()
	return nil
}

func (ef *eventsFile) close() {
	if ef.f != nil {
		_ = ef.w.Flush()
		_ = ef.f.Sync()
		_ = ef.f.Close()
	}
}

// write appends one event, rotating first when the file is full.
func (ef *eventsFile) write(e *store.Event) error {
	line, err := json.Marshal(store.EventView(e))
	if err != nil {
		return err
	}
	return ef.writeLine(append(line, '\n'))
}

// writeLine appends one line, rotating first when the file is full.
func (ef *eventsFile) writeLine(line []byte) error {
	if ef.size > 0 && ef.size+int64(len(line)) > ef.maxSize {
		if err := ef.rotate(); err != nil {
			return err
		}
	}
	n, err := ef.w.Write(line)
	ef.size += int64(n)
	return err
}

// rotate shifts FILE.i to FILE.i+1 (dropping the oldest beyond keep) and
// FILE to FILE.1, then opens a new FILE.
func (ef *eventsFile) rotate() error {
	ef.close()
	ef.f = nil
	_ = os.Remove(fmt.Sprintf("%s.%d", ef.path, ef.keep))
	for i := ef.keep - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", ef.path, i), fmt.Sprintf("%s.%d", ef.path, i+1))
	}
	var err error
	if ef.keep > 0 {
		err = os.Rename(ef.path, ef.path+".1")
	} else {
		err = os.Remove(ef.path)
	}
	if err != nil {
		return err
	}
	return ef.open()
}

// lastIDInFile is the id of the last whole line of the file, or -1 when
// the file does not exist or holds no event (the newest rotated file is
// read when the current one is empty).
func lastIDInFile(path string) (int64, error) {
	for _, p := range []string{path, path + ".1"} {
		id, err := lastLineID(p)
		if err != nil || id >= 0 {
			return id, err
		}
	}
	return -1, nil
}

func lastLineID(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	// Read back from the end until a whole line is in the window.
	for window := int64(64 << 10); ; window *= 4 {
		start := max(st.Size()-window, 0)
		buf := make([]byte, st.Size()-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return 0, err
		}
		end := bytes.LastIndexByte(buf, '\n')
		if end < 0 && start > 0 && window < 64<<20 {
			continue
		}
		if end+1 < len(buf) {
			// A line torn by a crash: cut it off, it is written again.
			if err := f.Truncate(start + int64(end) + 1); err != nil {
				return 0, err
			}
			buf = buf[:end+1]
		}
		buf = bytes.TrimRight(buf, "\n")
		if len(buf) == 0 {
			return -1, nil
		}
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 && start > 0 && window < 64<<20 {
			continue
		}
		var e struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(buf[i+1:], &e); err != nil {
			return 0, fmt.Errorf("%s: the last line is not an event: %v", path, err)
		}
		return e.ID, nil
	}
}
