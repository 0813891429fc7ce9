package api

// Speed-tuned: the helpers of the hand-written JSON encoders (strings,
// arrays, the head every record view starts with, list meta, pooled
// buffers), used by identities_json.go, clientservices_json.go,
// sessions_json.go and http_call.go's created answer.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'ListIdentities|ClientServices_List50' ./api/
//	correctness: TestAppendJSONStringMatchesEncodingJSON, FuzzAppendJSONString, TestFragCacheBounded,
//	             TestAppendIdentity_SameBytesAsTheView, TestListIdentities_SameAnswerAsTheGenericList (./api/)
//
// A change must keep: the bytes are exactly encoding/json's (HTML-safe
// escaping, the view's key order); anything the fast path does not copy as
// is goes to encoding/json.

import (
	"encoding/json"
	"strconv"
	"sync"

	"edgectl/store"
)

// Hand-written JSON for the hottest answers. encoding/json walks every value
// by reflection and re-validates what a Marshaler returns; for a 38 KB list
// that is most of the request's CPU. These helpers append to one byte slice
// and produce exactly what encoding/json produces (HTML-safe strings, keys
// in the order the view declares them): tests compare the two byte for byte.
// The rule (docs/architecture.md): a hand encoder only with a benchmark that
// shows the need and a byte-for-byte test against encoding/json.

// jsonSafe marks the ASCII bytes encoding/json writes as they are inside a
// string with HTML escaping on (json.Marshal and json.Encoder's default).
var jsonSafe = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string. Plain ASCII, the common case
// for ids, names and times, is copied; anything else (escapes, non-ASCII,
// invalid UTF-8) is left to encoding/json so the bytes stay identical.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonSafe[s[i]] {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(dst, raw...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendJSONStrings appends a JSON array of strings ([] for none).
func appendJSONStrings(dst []byte, l []string) []byte {
	dst = append(dst, '[')
	for i, s := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

func appendJSONBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendJSONInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// appendRecordHead opens a record's view with the fields every view starts
// with: {"_links":{"self":...},"id":...,"createdAt":...,"updatedAt":...,"tags":...
// (no closing brace: the caller appends the kind's own fields).
func appendRecordHead(dst []byte, path string, b *store.Base) ([]byte, error) {
	dst = append(dst, `{"_links":{"self":{"href":"./`...)
	dst = append(dst, path...)
	dst = append(dst, '/')
	dst = appendJSONInner(dst, b.ID)
	dst = append(dst, `"}},"id":`...)
	dst = appendJSONString(dst, b.ID)
	dst = append(dst, `,"createdAt":`...)
	dst = appendJSONTime(dst, b.CreatedAt)
	dst = append(dst, `,"updatedAt":`...)
	dst = appendJSONTime(dst, b.UpdatedAt)
	dst = append(dst, `,"tags":`...)
	return appendJSONObject(dst, b.Tags, len(b.Tags))
}

// appendMetaVersions opens the envelope's meta object with the fields every
// meta has, in encoding/json's (sorted) key order; the caller adds the rest.
func appendMetaVersions(dst []byte) []byte {
	return append(dst, `"meta":{"apiEnrollmentVersion":"`+apiEnrollmentVersion+`","apiVersion":"`+apiVersion+`"`...)
}

// appendListMeta appends the meta object of a list answer, as okMeta with
// pagination and filterableFields writes it.
func appendListMeta(dst []byte, lr *listReq, limit, count int) []byte {
	dst = appendMetaVersions(dst)
	dst = append(dst, `,"filterableFields":`...)
	if names := lr.fields.Names(); names != nil {
		dst = appendJSONStrings(dst, names)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"pagination":{"limit":`...)
	dst = appendJSONInt(dst, int64(limit))
	dst = append(dst, `,"offset":`...)
	dst = appendJSONInt(dst, int64(lr.offset))
	dst = append(dst, `,"totalCount":`...)
	dst = appendJSONInt(dst, int64(count))
	return append(dst, "}}"...)
}

// jsonBufs recycles answer buffers: a 38 KB answer built in a fresh slice
// grows through a dozen allocations, every one of them garbage at once.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledBuf keeps an occasional huge answer from pinning its buffer.
const maxPooledBuf = 1 << 20

func getJSONBuf() *[]byte { return jsonBufs.Get().(*[]byte) }

func putJSONBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	jsonBufs.Put(b)
}

// writeJSONBytes answers status with a complete JSON body (which ends with
// the newline json.Encoder writes), in one write with its length known.
func (c *call) writeJSONBytes(status int, body []byte) {
	c.wrote = true
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(status)
	_, _ = c.w.Write(body)
}
