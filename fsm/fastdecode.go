package fsm

// Speed-tuned: a hand-written decoder of the entries nodes apply most
// (identity creates, routers' terminator creates), tried before
// store.DecodeJSON.
//
// Guarded by
//
//	speed:       go test -run '^$' -bench 'DecodeEntry_IdentityCreate|ApplyBatch_IdentityCreate' ./fsm/,
//	             go test -run '^$' -bench 'Replay_TerminatorCreates' -benchtime 20000x ./fsm/
//	correctness: TestFastDecode_AFullEntryTakesTheFastPath, TestFastDecode_GivesUpOnWhatItDoesNotRead,
//	             FuzzFastDecode, TestDecodeEntry_ReadsWhatEncodingJSONReads (./fsm/); every fsm test
//	             cross-checks each fast decode against store.DecodeJSON (TestMain turns
//	             store.CrossCheckDecoding on)
//
// A change must keep: where the fast path answers, it reads exactly what
// store.DecodeJSON reads (the same value, reflect.DeepEqual); anything it
// does not read it gives up on (false), never guesses; a field added to a
// payload sends entries down the slow path until the fast one learns it.

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
// (a burst of enrollments, a bulk import) and the terminators routers make
// for their hosts (a restart replays them). Every node decodes every entry,
// and with encoding/json/v2 that was a ninth of the three nodes' CPU under
// bench/sidebyside.sh's identity creates (about 11 µs per entry per node,
// docs/performance-history.md, Issue 16, part 14).
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
	CmdIdentityCreate:           decodeIdentityCreateEntry,
	CmdTerminatorCreateByRouter: decodeRouterTerminatorEntry,
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
	cache internedStrings // intern's
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

// scanners keep their strings from one entry to the next.
var scanners = sync.Pool{New: func() any { return new(scanner) }}

// intern returns b as a string, from s's cache of recent short strings when
// it is there.
func (s *scanner) intern(b []byte) string {
	if len(b) < 2 || len(b) > 32 {
		return string(b)
	}
	h := uint32(len(b))*0x9e3779b1 ^ uint32(b[0])<<16 ^ uint32(b[len(b)-1])<<8 ^ uint32(b[len(b)/2])
	slot := &s.cache[(h^h>>8)%uint32(len(s.cache))]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
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

// member is one object member the fast path reads into a T: its name, as
// the struct tag spells it, and how its value is read.
type member[T any] struct {
	name string
	read func(s *scanner, v *T) bool
}

// object reads "{" members "}" into v, each member by the one of ms with
// its name (each at most once); a name not in ms makes it give up.
func object[T any](s *scanner, v *T, ms []member[T]) bool {
	if !s.lit("{") {
		return false
	}
	if s.lit("}") {
		return true
	}
	var seen uint64
	next := 0 // the members come in the order of ms, as encoding/json writes them
	for {
		name, ok := s.plain()
		if !ok || !s.lit(":") {
			return false
		}
		i := next
		if i >= len(ms) || ms[i].name != string(name) {
			for i = 0; i < len(ms) && ms[i].name != string(name); i++ {
			}
		}
		if i == len(ms) || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		next = i + 1
		if !ms[i].read(s, v) {
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

// open reads a value of an open shape (a map, a struct the fast path does
// not know) with store.DecodeJSON, or null (the zero value).
func (s *scanner) open(v any) bool { return s.null() || s.other(v) }

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

// decodeIdentityCreateEntry is the fast path of an identity.create entry.
func decodeIdentityCreateEntry(entry []byte, c *entryOf[IdentityCreate]) bool {
	return decodeEntry(entry, c, identityCreateEnvelope)
}

// decodeRouterTerminatorEntry is the fast path of a
// terminator.createByRouter entry: the entries a restarting node replays
// most while routers' hosts bind (issue 45's restart replayed 24,876).
func decodeRouterTerminatorEntry(entry []byte, c *entryOf[RouterTerminator]) bool {
	return decodeEntry(entry, c, routerTerminatorEnvelope)
}

// decodeEntry reads a whole entry, whose envelope's members are ms.
func decodeEntry[P any](entry []byte, c *entryOf[P], ms []member[entryOf[P]]) bool {
	s := scanners.Get().(*scanner)
	s.b, s.i = entry, 0
	ok := object(s, c, ms) && s.i == len(s.b)
	s.b = nil
	scanners.Put(s)
	return ok
}

var (
	identityCreateEnvelope   = envelopeMembers(identityCreateMembers)
	routerTerminatorEnvelope = envelopeMembers(routerTerminatorMembers)
)

// envelopeMembers are the members of the writer's envelope around a
// payload whose members are payload.
func envelopeMembers[P any](payload []member[P]) []member[entryOf[P]] {
	return []member[entryOf[P]]{
		{"type", func(s *scanner, c *entryOf[P]) bool {
			var t string
			ok := s.str(&t)
			c.Type = CommandType(t)
			return ok
		}},
		{"payload", func(s *scanner, c *entryOf[P]) bool {
			if s.peek() != '{' {
				return false // null: the slow path
			}
			c.Payload = new(P)
			return object(s, c.Payload, payload)
		}},
		{"at", func(s *scanner, c *entryOf[P]) bool { return s.time(&c.At) }},
		{"actor", func(s *scanner, c *entryOf[P]) bool {
			if s.null() {
				return true
			}
			c.Actor = new(store.EventActor)
			return object(s, c.Actor, actorMembers)
		}},
		{"rid", func(s *scanner, c *entryOf[P]) bool { return s.str(&c.RID) }},
	}
}

var actorMembers = []member[store.EventActor]{
	{"identityId", func(s *scanner, a *store.EventActor) bool { return s.str(&a.IdentityID) }},
	{"identityName", func(s *scanner, a *store.EventActor) bool { return s.str(&a.IdentityName) }},
	{"apiSessionId", func(s *scanner, a *store.EventActor) bool { return s.str(&a.APISessionID) }},
	{"sourceAddress", func(s *scanner, a *store.EventActor) bool { return s.str(&a.SourceAddress) }},
	{"nodeId", func(s *scanner, a *store.EventActor) bool { return s.str(&a.NodeID) }},
}

var identityCreateMembers = []member[IdentityCreate]{
	{"identity", func(s *scanner, p *IdentityCreate) bool {
		if s.null() {
			return true
		}
		p.Identity = new(store.Identity)
		return object(s, p.Identity, identityMembers)
	}},
	{"enrollments", func(s *scanner, p *IdentityCreate) bool {
		if s.null() {
			return true
		}
		p.Enrollments = []*store.Enrollment{}
		return s.array(func() bool {
			e := new(store.Enrollment)
			p.Enrollments = append(p.Enrollments, e)
			return s.peek() == '{' && object(s, e, enrollmentMembers)
		})
	}},
	{"authenticators", func(s *scanner, p *IdentityCreate) bool { return s.open(&p.Authenticators) }},
}

// baseMembers are the members of the store.Base a T embeds, which come
// first (encoding/json writes an embedded struct's fields in its place).
func baseMembers[T any](base func(*T) *store.Base) []member[T] {
	return []member[T]{
		{"id", func(s *scanner, v *T) bool { return s.str(&base(v).ID) }},
		{"createdAt", func(s *scanner, v *T) bool { return s.time(&base(v).CreatedAt) }},
		{"updatedAt", func(s *scanner, v *T) bool { return s.time(&base(v).UpdatedAt) }},
		{"tags", func(s *scanner, v *T) bool { return s.open(&base(v).Tags) }},
	}
}

var identityMembers = append(baseMembers(func(r *store.Identity) *store.Base { return &r.Base }), []member[store.Identity]{
	{"name", func(s *scanner, r *store.Identity) bool { return s.str(&r.Name) }},
	{"typeId", func(s *scanner, r *store.Identity) bool { return s.str(&r.TypeID) }},
	{"isAdmin", func(s *scanner, r *store.Identity) bool { return s.boolean(&r.IsAdmin) }},
	{"isDefaultAdmin", func(s *scanner, r *store.Identity) bool { return s.boolean(&r.IsDefaultAdmin) }},
	{"appData", func(s *scanner, r *store.Identity) bool { return s.open(&r.AppData) }},
	{"authPolicyId", func(s *scanner, r *store.Identity) bool { return s.str(&r.AuthPolicyID) }},
	{"defaultHostingCost", func(s *scanner, r *store.Identity) bool { return s.integer(&r.DefaultHostingCost) }},
	{"defaultHostingPrecedence", func(s *scanner, r *store.Identity) bool { return s.str(&r.DefaultHostingPrecedence) }},
	{"serviceHostingCosts", func(s *scanner, r *store.Identity) bool { return s.open(&r.ServiceHostingCosts) }},
	{"serviceHostingPrecedences", func(s *scanner, r *store.Identity) bool { return s.open(&r.ServiceHostingPrecedences) }},
	{"externalId", func(s *scanner, r *store.Identity) bool { return s.optStr(&r.ExternalID) }},
	{"roleAttributes", func(s *scanner, r *store.Identity) bool { return s.strings(&r.RoleAttributes) }},
	{"disabled", func(s *scanner, r *store.Identity) bool { return s.boolean(&r.Disabled) }},
	{"disabledAt", func(s *scanner, r *store.Identity) bool { return s.optTime(&r.DisabledAt) }},
	{"disabledUntil", func(s *scanner, r *store.Identity) bool { return s.optTime(&r.DisabledUntil) }},
	{"envInfo", func(s *scanner, r *store.Identity) bool { return s.open(&r.EnvInfo) }},
	{"sdkInfo", func(s *scanner, r *store.Identity) bool { return s.open(&r.SdkInfo) }},
	{"trace", func(s *scanner, r *store.Identity) bool { return s.open(&r.Trace) }},
}...)

var enrollmentMembers = append(baseMembers(func(e *store.Enrollment) *store.Base { return &e.Base }), []member[store.Enrollment]{
	{"identityId", func(s *scanner, e *store.Enrollment) bool { return s.str(&e.IdentityID) }},
	{"method", func(s *scanner, e *store.Enrollment) bool { return s.str(&e.Method) }},
	{"caId", func(s *scanner, e *store.Enrollment) bool { return s.optStr(&e.CaID) }},
	{"username", func(s *scanner, e *store.Enrollment) bool { return s.optStr(&e.Username) }},
	{"token", func(s *scanner, e *store.Enrollment) bool { return s.str(&e.Token) }},
	{"jwt", func(s *scanner, e *store.Enrollment) bool { return s.str(&e.JWT) }},
	{"expiresAt", func(s *scanner, e *store.Enrollment) bool { return s.time(&e.ExpiresAt) }},
}...)

var routerTerminatorMembers = []member[RouterTerminator]{
	{"terminator", func(s *scanner, p *RouterTerminator) bool {
		if s.null() {
			return true
		}
		p.Terminator = new(store.Terminator)
		return object(s, p.Terminator, terminatorMembers)
	}},
	{"at", func(s *scanner, p *RouterTerminator) bool { return s.time(&p.At) }},
}

var terminatorMembers = append(baseMembers(func(r *store.Terminator) *store.Base { return &r.Base }), []member[store.Terminator]{
	{"serviceId", func(s *scanner, r *store.Terminator) bool { return s.str(&r.ServiceID) }},
	{"routerId", func(s *scanner, r *store.Terminator) bool { return s.str(&r.RouterID) }},
	{"binding", func(s *scanner, r *store.Terminator) bool { return s.str(&r.Binding) }},
	{"address", func(s *scanner, r *store.Terminator) bool { return s.str(&r.Address) }},
	{"identity", func(s *scanner, r *store.Terminator) bool { return s.str(&r.Identity) }},
	{"identitySecret", func(s *scanner, r *store.Terminator) bool { return s.str(&r.IdentitySecret) }},
	{"cost", func(s *scanner, r *store.Terminator) bool { return s.integer(&r.Cost) }},
	{"precedence", func(s *scanner, r *store.Terminator) bool { return s.str(&r.Precedence) }},
	{"hostId", func(s *scanner, r *store.Terminator) bool { return s.str(&r.HostID) }},
	{"peerData", func(s *scanner, r *store.Terminator) bool { return s.open(&r.PeerData) }},
	{"isSystem", func(s *scanner, r *store.Terminator) bool { return s.boolean(&r.IsSystem) }},
}...)
