package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// The store's tests decode and encode every snapshot value with both
// encoding/json/v2 and encoding/json and panic on a difference (jsoncodec.go).
func TestMain(m *testing.M) {
	CrossCheckDecoding(true)
	os.Exit(m.Run())
}

// TestSnapshotDecoder_LoadsWhatEncodingJSONWrote: a config whose data holds
// client bytes kept verbatim (duplicate names, invalid UTF-8) is restored
// byte for byte, the restored model dumps to the same stream, and a stream
// cut short fails.
func TestSnapshotDecoder_LoadsWhatEncodingJSONWrote(t *testing.T) {
	t.Parallel()
	s := New()
	tx := s.Write()
	data := json.RawMessage(`{"a":1,"a":2,"s":"` + "\xff" + `","n":12345678901234567890}`)
	for _, r := range []struct {
		k *Kind
		r Record
	}{
		{KindConfigType, &ConfigType{Base: Base{ID: "t"}, Named: Named{Name: "type"}}},
		{KindConfig, &Config{Base: Base{ID: "c"}, Named: Named{Name: "c"}, ConfigTypeID: "t", Data: data}},
		{KindIdentity, &Identity{Base: Base{ID: "i", Tags: map[string]any{"k": "v", "n": 1.5, "z": nil}}, Named: Named{Name: "i"},
			TypeID: "Device", AuthPolicyID: "default", RoleAttributes: []string{"r"}}},
	} {
		if err := tx.Insert(r.k, r.r); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	var first bytes.Buffer
	if err := s.Read().Dump(&first); err != nil {
		t.Fatal(err)
	}
	s2 := New()
	if err := s2.Load(NewSnapshotDecoder(bytes.NewReader(first.Bytes()))); err != nil {
		t.Fatal(err)
	}
	r, err := s2.Read().Get(KindConfig, "c")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.(*Config)
	if c == nil || !bytes.Equal(c.Data, data) {
		t.Fatalf("restored config %+v, want its data byte for byte", c)
	}
	var again bytes.Buffer
	if err := s2.Read().Dump(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Fatalf("the restored model dumps\n%s\nnot\n%s", again.Bytes(), first.Bytes())
	}
	cut := first.Bytes()[:first.Len()-10]
	if err := New().Load(NewSnapshotDecoder(bytes.NewReader(cut))); err == nil {
		t.Fatal("a stream cut short loaded")
	}
}

// TestDecodeJSON_TheCrossCheckCatchesADifference: the check the tests rely
// on does fire: v2's own defaults refuse a duplicate name, which v1 reads.
func TestDecodeJSON_TheCrossCheckCatchesADifference(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "encoding/json reads") {
			t.Fatalf("recovered %v, want the cross-check's panic", r)
		}
	}()
	var c Config
	_ = decodeJSONWith([]byte(`{"data":{"a":1,"a":2}}`), &c, jsonv2.DefaultOptionsV2())
}

// TestLoad_WithoutTheCrossCheckReadsWhatWasWritten: nodes load snapshots
// with the cross-check off, where values are decoded straight from the
// stream; a model of terminators (peer data), events (bodies) and client
// bytes kept verbatim (a config's data with a duplicate name and invalid
// UTF-8) dumps to the same stream after such a load. Not parallel: it
// turns the check off for the process.
func TestLoad_WithoutTheCrossCheckReadsWhatWasWritten(t *testing.T) {
	s := eventStore(t, 50)
	tx := s.Write()
	for i := range 20 {
		if err := tx.Insert(KindTerminator, fleetTerminator(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Insert(KindConfigType, &ConfigType{Base: Base{ID: "t"}, Named: Named{Name: "type"}}); err != nil {
		t.Fatal(err)
	}
	data := json.RawMessage(`{"a":1,"a":2,"s":"` + "\xff" + `"}`)
	if err := tx.Insert(KindConfig, &Config{Base: Base{ID: "c"}, Named: Named{Name: "c"}, ConfigTypeID: "t", Data: data}); err != nil {
		t.Fatal(err)
	}
	tx.Commit()
	var first bytes.Buffer
	if err := s.Read().Dump(&first); err != nil {
		t.Fatal(err)
	}
	CrossCheckDecoding(false)
	defer CrossCheckDecoding(true)
	loaded := New()
	if err := loaded.Load(NewSnapshotDecoder(bytes.NewReader(first.Bytes()))); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := loaded.Read().Dump(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Fatalf("the loaded model dumps\n%s\nnot\n%s", again.Bytes(), first.Bytes())
	}
}
