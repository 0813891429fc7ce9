package controller

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"edgectl/store"
)

// readEventIDs is the ids of the event lines of one file, in order.
func readEventIDs(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: a line that is not an event: %q", path, sc.Text())
		}
		ids = append(ids, e.ID)
	}
	return ids
}

func testEvent(seq int64) *store.Event {
	return &store.Event{Seq: seq, Index: uint64(seq), Namespace: "entity", Action: "created", EntityType: "identities",
		EntityID: fmt.Sprintf("id-%d", seq), EntityName: strings.Repeat("n", 100)}
}

// TestEventsFileRotatesBySizeAndKeepsTheNewest writes past the size limit
// many times: every file stays within the limit, only --events-file-keep
// rotated files are kept, and the kept files hold consecutive ids, newest
// in FILE, then FILE.1, FILE.2.
func TestEventsFileRotatesBySizeAndKeepsTheNewest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	ef := &eventsFile{path: path, maxSize: 4096, keep: 2}
	if err := ef.open(); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for seq := int64(1); seq <= n; seq++ {
		if err := ef.write(testEvent(seq)); err != nil {
			t.Fatal(err)
		}
	}
	ef.close()

	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Fatalf("FILE.3 exists with --events-file-keep 2 (stat: %v)", err)
	}
	var all []int64
	for _, p := range []string{path + ".2", path + ".1", path} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 4096 {
			t.Errorf("%s is %d bytes, over the 4096 limit", p, st.Size())
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, st.Mode().Perm())
		}
		all = append(all, readEventIDs(t, p)...)
	}
	if len(all) == 0 || all[len(all)-1] != n {
		t.Fatalf("the newest file does not end with event %d: %v", n, all)
	}
	for i := 1; i < len(all); i++ {
		if all[i] != all[i-1]+1 {
			t.Fatalf("ids across FILE.2, FILE.1, FILE are not consecutive at %d: %v", i, all)
		}
	}
	if all[0] == 1 {
		t.Fatalf("nothing was dropped: %d events fit in 3 files of 4 KiB?", n)
	}
	id, err := lastIDInFile(path)
	if err != nil || id != n {
		t.Fatalf("lastIDInFile = %d, %v; want %d", id, err, n)
	}
}

// TestEventsFileResumeAfterACrash: the id to resume after is the last whole
// line; a torn last line is cut off; when FILE was just rotated (empty),
// the id comes from FILE.1; with no file at all there is nothing to resume.
func TestEventsFileResumeAfterACrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if id, err := lastIDInFile(path); err != nil || id != -1 {
		t.Fatalf("no file: lastIDInFile = %d, %v; want -1", id, err)
	}

	ef := &eventsFile{path: path, maxSize: 1 << 20, keep: 1}
	if err := ef.open(); err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 5; seq++ {
		if err := ef.write(testEvent(seq)); err != nil {
			t.Fatal(err)
		}
	}
	ef.close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":6,"index":6,"names`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if id, err := lastIDInFile(path); err != nil || id != 5 {
		t.Fatalf("torn line: lastIDInFile = %d, %v; want 5", id, err)
	}
	if ids := readEventIDs(t, path); len(ids) != 5 {
		t.Fatalf("the torn line was not cut off: ids %v", ids)
	}

	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := lastIDInFile(path); err != nil || id != 5 {
		t.Fatalf("empty FILE after rotation: lastIDInFile = %d, %v; want 5 from FILE.1", id, err)
	}

	if err := os.WriteFile(path, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := lastIDInFile(path); err == nil || !strings.Contains(err.Error(), "not an event") {
		t.Fatalf("a file of something else: err = %v, want one naming the last line", err)
	}
}
