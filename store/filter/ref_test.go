package filter

import (
	"strings"
	"testing"
)

// The items of these tests refer to their owner (testEnv): "o1" is the
// admin "boss" owned by "o2", "root", which owns itself.

func TestRef_ReadsEveryFieldTypeOfTheReferencedRecord(t *testing.T) {
	boss, root, none := &item{owner: "o1"}, &item{owner: "o2"}, &item{}
	for _, src := range []string{
		`owner.name = "boss"`,
		`owner.name contains "os" and owner.name icontains "BO"`,
		`owner.isAdmin = true`,
		`owner.cost = 7`, // read through Get
		`owner.createdAt = datetime(2026-01-01T00:00:00Z)`,
		`anyOf(owner.roleAttributes) = "ops" and count(owner.roleAttributes) = 1`,
		`owner.tags.team = "red"`,
		`owner.type.name = "user"`, // a field whose own name has a dot
	} {
		checkMatches(t, src, yes(boss), no(root), no(none))
	}
}

func TestRef_ChainsThroughReferences(t *testing.T) {
	checkMatches(t, `owner.owner.name = "root"`, yes(&item{owner: "o1"}), yes(&item{owner: "o2"}), no(&item{}))
	checkMatches(t, `owner.owner.owner.owner.isAdmin = false`, yes(&item{owner: "o1"}))
}

func TestRef_NoRecordReadsAsNull(t *testing.T) {
	dangling, none := &item{owner: "gone"}, &item{}
	checkMatches(t, `owner.name = null`, yes(dangling), yes(none), no(&item{owner: "o1"}))
	checkMatches(t, `owner.name = "boss" or owner.isAdmin = true or owner.cost > 0`, no(dangling), no(none))
	checkMatches(t, `isEmpty(owner.roleAttributes) and owner.tags.team = null`, yes(dangling), yes(none))
}

func TestRef_IDIsTheReferenceItself(t *testing.T) {
	// It needs no lookup: a reference to a record that is gone still has it.
	checkMatches(t, `owner.id = "gone"`, yes(&item{owner: "gone"}), no(&item{owner: "o1"}))
	checkMatches(t, `owner = "o1"`, yes(&item{owner: "o1"}), no(&item{owner: "o2"}))
	checkExpr(t, `owner.name = "boss" and owner.id in ["o1"]`, `owner.name = "boss" and owner.id in ["o1"]`)
}

func TestRef_SortsByTheReferenceButNotThroughIt(t *testing.T) {
	q := mustCompile(t, `sort by owner desc`)
	if c := q.Compare(&item{owner: "o1"}, &item{owner: "o2"}); c <= 0 {
		t.Errorf("sort by owner desc: o1 before o2 (%d)", c)
	}
	checkErrors(t, []errCase{
		{`sort by owner.name`, 8, `cannot sort by "owner.name": a list sorts by its own fields`},
		{`sort by name, owner.id`, 14, `cannot sort by "owner.id"`},
	})
}

func TestRef_UnknownSubFieldNamesTheWholeField(t *testing.T) {
	checkErrors(t, []errCase{
		{`owner.nme = "x"`, 0, `unknown field "owner.nme": "owner" refers to item records, which have no field "nme"`},
		{`name = "x" or owner.Name = "x"`, 14, `unknown field "owner.Name": "owner" refers to item records, which have no field "Name" (did you mean "owner.name"?)`},
		{`owner.owner.nme = 1`, 0, `unknown field "owner.owner.nme": "owner.owner" refers to item records, which have no field "nme"`},
		{`anyOf(owner.roles) = "x"`, 6, `unknown field "owner.roles"`},
		{`owner.tags = 1`, 0, `field "owner.tags" needs a key, like "owner.tags.name"`},
		{`owner.isAdmin = "x"`, 16, `bool field "owner.isAdmin"`},
		{`owner.roleAttributes = "x"`, 0, `field "owner.roleAttributes" is a list`},
		{`name.x = 1`, 0, `unknown field "name.x"`},
		{strings.Repeat("owner.", MaxRefs+1) + `name = 1`, 0, `follows more than 8 references`},
	})
}

func TestRef_NeedsAnEnvThatFindsRecords(t *testing.T) {
	for _, env := range []any{nil, "not a map"} {
		_, err := CompileIn(`owner.name = "boss"`, testSchema(), env)
		if err == nil || !strings.Contains(err.Error(), `field "owner.name" cannot be read here: this list cannot look up the item records "owner" refers to`) {
			t.Errorf("env %v: %v", env, err)
		}
	}
	// The reference itself, and its id, need none.
	for _, src := range []string{`owner = "o1"`, `owner.id = "o1"`} {
		if _, err := Compile(src, testSchema()); err != nil {
			t.Errorf("Compile(%q) without an env: %v", src, err)
		}
	}
}

func TestRef_RequiresIgnoresTheReferencedRecordsName(t *testing.T) {
	if need := mustCompile(t, `owner.name = "boss"`).Requires("name"); need != nil {
		t.Errorf("Requires(name) of owner.name = %+v, want nil", need)
	}
	need := mustCompile(t, `owner.name = "boss" and name contains "w"`).Requires("name")
	if need == nil || need.Substring != "w" {
		t.Errorf("Requires(name) = %+v, want the substring w", need)
	}
}
