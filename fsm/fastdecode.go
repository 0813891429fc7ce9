package fsm

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"edgectl/store"
)

// A fast path for decoding the entries nodes apply most: identity creates
// (a burst of enrollments, a bulk import). Every node decodes every entry,
// and with encoding/json/v2 that was a ninth of the three nodes' CPU under
// bench/sidebyside.sh's identity creates (about 11 µs per entry per node,
// docs/performance.md, part 14).
//
// The fast path reads only the JSON this package writes: the writer's
// envelope around encoding/json's encoding of the payload, without
// whitespace, with object names spelled as the struct tags spell them, each
// once, strings without escapes. Anything else (a name it does not know, an
// escape, a number with a fraction, a duplicate) makes it give up, and the
// entry is decoded by store.DecodeJSON from the start. Values whose shape is
// open (tags, app data, maps, the SDK's info) are handed to
// store.DecodeJSON on their own bytes. So where it answers it reads what
// store.DecodeJSON reads (the tests cross-check every fast decode against
// it, store.CrossCheckDecoding), and a new field in a struct only sends its
// entries down the slow path until the fast one learns it
// (TestFastDecode_AFullEntryTakesTheFastPath).

// fastEntryDecoders are the command types with a fast path; each value is a
// func([]byte, *entryOf[P]) bool for the command's payload type P (on).
var fastEntryDecoders = map[CommandType]any{
	CmdIdentityCreate: decodeIdentityCreateEntry,
}

// decodeFast runs the fast path of an entry. With store.CrossCheckDecoding
// on (every test), it also decodes the entry with store.DecodeJSON and
// panics unless both read the same.
func decodeFast[P any](fast func([]byte, *entryOf[P]) bool, entry []byte, c *entryOf[P]) bool {
	if !fast(entry, c) {
		return false
	}
	if store.CrossCheckingDecoding() {
		var want entryOf[P]
		if err := store.DecodeJSON(entry, &want); err != nil || !reflect.DeepEqual(c, &want) {
			panic(fmt.Sprintf("fsm: the fast path reads %s as %+v, store.DecodeJSON as %+v (%v)", entry, c, &want, err))
		}
	}
	return true
}

// scanner reads one JSON text front to back; every method returns false
// (leaving the position anywhere) when the text is not in the shape the
// fast path reads.
type scanner struct {
	b     []byte
	i     int
	cache *internedStrings // intern's, taken from interned when first needed
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a null if one is next.
func (s *scanner) null() bool { return s.lit("null") }

// plain returns the content of a string without escapes, holding valid
// UTF-8 and no control characters: its bytes are its value.
func (s *scanner) plain() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	j := start
	// Eight bytes at a time while none is a quote, a backslash, a control
	// character or outside ASCII.
	for ; j+8 <= len(s.b); j += 8 {
		if special(binary.LittleEndian.Uint64(s.b[j:])) {
			break
		}
	}
	ascii := true
	for ; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return nil, false
			}
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// special reports whether any of the eight bytes in w is a quote, a
// backslash, below 0x20 or above 0x7f.
func special(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zeroIn := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (w&highs)|((w-0x20*ones)&^w&highs)|zeroIn(w^('"'*ones))|zeroIn(w^('\\'*ones)) != 0
}

// str reads a string, or null (as encoding/json, the zero value).
func (s *scanner) str(v *string) bool {
	if s.null() {
		return true
	}
	b, ok := s.plain()
	*v = s.intern(b)
	return ok
}

// internedStrings keeps the strings entries repeat (an identity's type,
// its auth policy, role attributes, an enrollment's method) from one entry
// to the next, as encoding/json/v2's decoder does: one allocation fewer for
// each.
type internedStrings [256]string

var interned = sync.Pool{New: func() any { return new(internedStrings) }}

// intern returns b as a string, from s's cache of recent short strings when
// it is there.
func (s *scanner) intern(b []byte) string {
	if len(b) < 2 || len(b) > 32 {
		return string(b)
	}
	if s.cache == nil {
		s.cache = interned.Get().(*internedStrings)
	}
	h := uint32(len(b))*0x9e3779b1 ^ uint32(b[0])<<16 ^ uint32(b[len(b)-1])<<8 ^ uint32(b[len(b)/2])
	slot := &s.cache[(h^h>>8)%uint32(len(s.cache))]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// done gives s's string cache back.
func (s *scanner) done() {
	if s.cache != nil {
		interned.Put(s.cache)
		s.cache = nil
	}
}

func (s *scanner) optStr(v **string) bool {
	if s.null() {
		return true
	}
	b, ok := s.plain()
	if ok {
		str := string(b)
		*v = &str
	}
	return ok
}

func (s *scanner) boolean(v *bool) bool {
	switch {
	case s.lit("true"):
		*v = true
	case s.lit("false"), s.null():
	default:
		return false
	}
	return true
}

// integer reads an integer without fraction or exponent.
func (s *scanner) integer(v *int) bool {
	if s.null() {
		return true
	}
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i > digits+1) {
		return false
	}
	switch s.peek() {
	case '.', 'e', 'E':
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, strconv.IntSize)
	*v = int(n)
	return err == nil
}

// time reads a timestamp as encoding/json/v2 with v1's semantics does:
// time.Time.UnmarshalText of the string's content.
func (s *scanner) time(v *time.Time) bool {
	if s.null() {
		return true
	}
	b, ok := s.plain()
	return ok && v.UnmarshalText(b) == nil
}

func (s *scanner) optTime(v **time.Time) bool {
	if s.null() {
		return true
	}
	t := new(time.Time)
	*v = t
	return s.time(t)
}

// strings reads an array of strings, or null.
func (s *scanner) strings(v *[]string) bool {
	if s.null() {
		return true
	}
	out := []string{}
	ok := s.array(func() bool {
		var str string
		if s.peek() == 'n' { // null (encoding/json's ""): the slow path's
			return false
		}
		if !s.str(&str) {
			return false
		}
		out = append(out, str)
		return true
	})
	*v = out
	return ok
}

// array reads "[" elements "]", each by elem.
func (s *scanner) array(elem func() bool) bool {
	if !s.lit("[") {
		return false
	}
	if s.lit("]") {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.lit("]") {
			return true
		}
		if !s.lit(",") {
			return false
		}
	}
}

// object reads "{" members "}": field decodes the value of the member with
// the name at index i of names (each read at most once); a name not in
// names makes it give up.
func (s *scanner) object(names []string, field func(i int) bool) bool {
	if !s.lit("{") {
		return false
	}
	if s.lit("}") {
		return true
	}
	var seen uint64
	next := 0 // the members come in the order of names, as encoding/json writes them
	for {
		name, ok := s.plain()
		if !ok || !s.lit(":") {
			return false
		}
		i := next
		if i >= len(names) || names[i] != string(name) {
			for i = 0; i < len(names) && names[i] != string(name); i++ {
			}
		}
		if i == len(names) || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		next = i + 1
		if !field(i) {
			return false
		}
		if s.lit("}") {
			return true
		}
		if !s.lit(",") {
			return false
		}
	}
}

// other hands the next value, whatever it is, to store.DecodeJSON.
func (s *scanner) other(v any) bool {
	end, ok := valueEnd(s.b, s.i)
	if !ok || store.DecodeJSON(s.b[s.i:end], v) != nil {
		return false
	}
	s.i = end
	return true
}

// valueEnd finds where the JSON value at b[i] ends, by its brackets and
// strings; the decoder the value is handed to checks the rest.
func valueEnd(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // a number or literal ended
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, depth == 0
}

var (
	envelopeNames = []string{"type", "payload", "at", "actor", "rid"}
	actorNames    = []string{"identityId", "identityName", "apiSessionId", "sourceAddress", "nodeId"}
	createNames   = []string{"identity", "enrollments", "authenticators"}
	baseNames     = []string{"id", "createdAt", "updatedAt", "tags"}
	identityNames = append(baseNames[:len(baseNames):len(baseNames)], "name", "typeId", "isAdmin", "isDefaultAdmin",
		"appData", "authPolicyId", "defaultHostingCost", "defaultHostingPrecedence", "serviceHostingCosts",
		"serviceHostingPrecedences", "externalId", "roleAttributes", "disabled", "disabledAt", "disabledUntil", "envInfo",
		"sdkInfo", "trace")
	enrollmentNames = append(baseNames[:len(baseNames):len(baseNames)], "identityId", "method", "caId", "username",
		"token", "jwt", "expiresAt")
)

// decodeIdentityCreateEntry is the fast path of an identity.create entry.
func decodeIdentityCreateEntry(entry []byte, c *entryOf[IdentityCreate]) bool {
	s := &scanner{b: entry}
	defer s.done()
	ok := s.object(envelopeNames, func(i int) bool {
		switch i {
		case 0:
			var t string
			ok := s.str(&t)
			c.Type = CommandType(t)
			return ok
		case 1:
			if s.peek() != '{' {
				return false // null: the slow path
			}
			c.Payload = new(IdentityCreate)
			return s.identityCreate(c.Payload)
		case 2:
			return s.time(&c.At)
		case 3:
			if s.null() {
				return true
			}
			c.Actor = new(store.EventActor)
			return s.actor(c.Actor)
		default:
			return s.str(&c.RID)
		}
	})
	return ok && s.i == len(s.b)
}

func (s *scanner) actor(a *store.EventActor) bool {
	return s.object(actorNames, func(i int) bool {
		return s.str([]*string{&a.IdentityID, &a.IdentityName, &a.APISessionID, &a.SourceAddress, &a.NodeID}[i])
	})
}

func (s *scanner) identityCreate(p *IdentityCreate) bool {
	return s.object(createNames, func(i int) bool {
		switch i {
		case 0:
			if s.null() {
				return true
			}
			p.Identity = new(store.Identity)
			return s.identity(p.Identity)
		case 1:
			if s.null() {
				return true
			}
			p.Enrollments = []*store.Enrollment{}
			return s.array(func() bool {
				e := new(store.Enrollment)
				p.Enrollments = append(p.Enrollments, e)
				return s.peek() == '{' && s.enrollment(e)
			})
		default:
			return s.null() || s.other(&p.Authenticators)
		}
	})
}

// base reads member i of a store.Base.
func (s *scanner) base(b *store.Base, i int) bool {
	switch i {
	case 0:
		return s.str(&b.ID)
	case 1:
		return s.time(&b.CreatedAt)
	case 2:
		return s.time(&b.UpdatedAt)
	default:
		return s.null() || s.other(&b.Tags)
	}
}

func (s *scanner) identity(r *store.Identity) bool {
	return s.object(identityNames, func(i int) bool {
		if i < len(baseNames) {
			return s.base(&r.Base, i)
		}
		switch identityNames[i] {
		case "name":
			return s.str(&r.Name)
		case "typeId":
			return s.str(&r.TypeID)
		case "isAdmin":
			return s.boolean(&r.IsAdmin)
		case "isDefaultAdmin":
			return s.boolean(&r.IsDefaultAdmin)
		case "appData":
			return s.null() || s.other(&r.AppData)
		case "authPolicyId":
			return s.str(&r.AuthPolicyID)
		case "defaultHostingCost":
			return s.integer(&r.DefaultHostingCost)
		case "defaultHostingPrecedence":
			return s.str(&r.DefaultHostingPrecedence)
		case "serviceHostingCosts":
			return s.null() || s.other(&r.ServiceHostingCosts)
		case "serviceHostingPrecedences":
			return s.null() || s.other(&r.ServiceHostingPrecedences)
		case "externalId":
			return s.optStr(&r.ExternalID)
		case "roleAttributes":
			return s.strings(&r.RoleAttributes)
		case "disabled":
			return s.boolean(&r.Disabled)
		case "disabledAt":
			return s.optTime(&r.DisabledAt)
		case "disabledUntil":
			return s.optTime(&r.DisabledUntil)
		case "envInfo":
			return s.null() || s.other(&r.EnvInfo)
		case "sdkInfo":
			return s.null() || s.other(&r.SdkInfo)
		default: // trace
			return s.null() || s.other(&r.Trace)
		}
	})
}

func (s *scanner) enrollment(e *store.Enrollment) bool {
	return s.object(enrollmentNames, func(i int) bool {
		if i < len(baseNames) {
			return s.base(&e.Base, i)
		}
		switch enrollmentNames[i] {
		case "identityId":
			return s.str(&e.IdentityID)
		case "method":
			return s.str(&e.Method)
		case "caId":
			return s.optStr(&e.CaID)
		case "username":
			return s.optStr(&e.Username)
		case "token":
			return s.str(&e.Token)
		case "jwt":
			return s.str(&e.JWT)
		default: // expiresAt
			return s.time(&e.ExpiresAt)
		}
	})
}
