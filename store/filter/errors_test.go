package filter

import (
	"strings"
	"testing"
	"time"
)

// errCase is a query that must fail at pos with a message containing msg.
type errCase struct {
	src string
	pos int
	msg string
}

func checkErrors(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		e := compileErr(t, c.src)
		if e.Pos != c.pos || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("Compile(%q) = %v\n\twant position %d and message containing %q", c.src, e, c.pos, c.msg)
		}
	}
}

func TestError_FormatSaysWhereAndWhat(t *testing.T) {
	e := compileErr(t, `name = "x" and a =`)
	if got, want := e.Error(), `filter: at position 18: expected a value after "=", found end of query`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestError_LexicalErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{`name = "abc`, 7, "unterminated string"},
		{`name = "ab\`, 7, "unterminated string"},
		{`name = "a\qb"`, 9, `invalid escape \q`},
		{`name = 'x'`, 7, `unexpected character "'"`},
		{`é = 1`, 0, `unexpected character "é"`},
		{`name ! "x"`, 5, `use "!=" or "not"`},
		{`cost = -x`, 7, `expected a digit after "-"`},
		{`cost = 1.`, 9, "decimal point"},
		{`cost = 12abc`, 9, `unexpected "a" after number "12"`},
		{`cost = 1.2.3`, 10, `after number "1.2"`},
		{`type. = 1`, 5, `expected a name after "type."`},
		{`createdAt = datetime(2026-01-01T00:00:00Z`, 12, `missing ")"`},
	})
}

func TestError_SyntaxErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{`name =`, 6, `expected a value after "=", found end of query`},
		{`name`, 4, `expected an operator`},
		{`name "x"`, 5, `found string "x"`},
		{`= 3`, 0, `expected a condition`},
		{`name = "x" and`, 14, `after "and", found end of query`},
		{`name = "x" or or a = 1`, 14, `found keyword "or"`},
		{`not`, 3, `after "not"`},
		{`()`, 1, `found ")"`},
		{`(name = "x"`, 11, `to close the "(" at position 0`},
		{`a = 1 or (b = 2`, 15, `to close the "(" at position 9`},
		{`name = "x")`, 10, `unexpected ")" without a matching "("`},
		{`name = "x" foo`, 11, `expected "and", "or", "sort by", "skip", "limit" or end of query, found name "foo"`},
		{`name not = "x"`, 9, `"contains", "icontains", "in" or "between" after "not"`},
		{`name in "a"`, 8, `expected "[" to start the list`},
		{`name in ["a" "b"]`, 13, `expected "," or "]"`},
		{`name in ["a",]`, 13, `expected a value after ","`},
		{`name in ["a"`, 12, `expected "," or "]"`},
		{`cost between 1 2`, 15, `expected "and" between the bounds`},
		{`cost between 1 and`, 18, `expected a value after "and"`},
		{`createdAt = datetime(2026-13-01T00:00:00Z)`, 21, `invalid datetime "2026-13-01T00:00:00Z"`},
		{`createdAt = datetime( )`, 22, `invalid datetime ""`},
		{`cost = 99999999999999999999`, 7, "out of range"},
		{`anyOf(1) = 2`, 6, `expected a list field name inside anyOf(...)`},
		{`anyOf(roleAttributes`, 20, `expected ")" after anyOf(roleAttributes`},
		{`anyOf(roleAttributes)`, 21, `after "anyOf(roleAttributes)"`},
		{`name = isAdmin`, 7, `expected a value after "=", found name "isAdmin"`},
	})
}

func TestError_ClauseErrors(t *testing.T) {
	checkErrors(t, []errCase{
		{`sort name`, 5, `expected "by" after "sort"`},
		{`sort by`, 7, `expected a field name to sort by`},
		{`sort by name,`, 13, `expected a field name to sort by`},
		{`sort by name foo`, 13, `expected ",", "asc", "desc", "skip", "limit" or end of query`},
		{`skip x`, 5, `expected a number after "skip"`},
		{`skip 1.5`, 5, "skip must be a whole number"},
		{`skip 99999999999`, 5, "skip must be a whole number"},
		{`limit -1`, 6, "limit must be a whole number"},
		{`limit`, 5, `expected a number or "none" after "limit"`},
		{`limit 5 skip 3`, 8, "in that order"},
		{`limit 1 limit 2`, 8, "at most once"},
		{`skip 1 sort by name`, 7, "in that order"},
		{`skip 1 x`, 7, `expected "limit" or end of query`},
		{`limit none x`, 11, `expected end of query`},
	})
}

func TestError_UnknownField(t *testing.T) {
	checkErrors(t, []errCase{
		{`nme = "x"`, 0, `unknown field "nme"`},
		{`name = "x" and nme = "y"`, 15, `unknown field "nme"`},
		{`Name = "x"`, 0, `unknown field "Name" (did you mean "name"?)`},
		{`anyOf(roles) = "x"`, 6, `unknown field "roles"`},
		{`isEmpty(roles)`, 8, `unknown field "roles"`},
		{`sort by nme`, 8, `unknown field "nme"`},
		{`type.nme = "x"`, 0, `unknown field "type.nme"`},
		{`tags = 1`, 0, `field "tags" needs a key`},
	})
	if _, err := Compile(`a = 1`, nil); err == nil || !strings.Contains(err.Error(), `unknown field "a"`) {
		t.Errorf("nil schema: %v", err)
	}
	if q, err := Compile(`limit 3`, nil); err != nil || !q.Match(1) {
		t.Errorf("nil schema without fields: %v", err)
	}
}

func TestError_TypeMismatch(t *testing.T) {
	checkErrors(t, []errCase{
		{`isAdmin = "x"`, 10, `cannot compare bool field "isAdmin" with string "x"`},
		{`name > 3`, 7, `cannot compare string field "name" with number 3`},
		{`createdAt = true`, 12, `cannot compare datetime field "createdAt" with bool true`},
		{`createdAt = "yesterday"`, 12, "not an RFC 3339 datetime"},
		{`cost = "3"`, 7, `cannot compare number field "cost" with string "3"`},
		{`name = datetime(2026-01-01T00:00:00Z)`, 7, `with datetime(`},
		{`name in ["a", 1]`, 14, `with number 1`},
		{`cost between 1 and "2"`, 19, `with string "2"`},
		{`cost contains "x"`, 5, `operator "contains" does not apply to number field "cost"`},
		{`isAdmin < true`, 8, `operator "<" does not apply to bool field "isAdmin"`},
		{`isAdmin between false and true`, 8, `operator "between" does not apply`},
		{`name < null`, 7, `null can only be used with "=", "!=", "in" and "not in"`},
		{`name contains null`, 14, `null can only be used`},
		{`tags.x contains 3`, 16, `contains needs a string`},
		{`tags.x > true`, 9, `> needs a number, string or datetime`},
	})
}

func TestError_ArrayMisuse(t *testing.T) {
	checkErrors(t, []errCase{
		{`roleAttributes = "x"`, 0, `field "roleAttributes" is a list: use anyOf(roleAttributes)`},
		{`anyOf(name) = "x"`, 6, `anyOf(...) needs a list field, but "name" is a string field`},
		{`allOf(tags.x) = "x"`, 6, `allOf(...) needs a list field`},
		{`isEmpty(name)`, 8, `isEmpty(...) needs a list field`},
		{`count(cost) > 1`, 6, `count(...) needs a list field`},
		{`anyOf(roleAttributes) = 1`, 24, `cannot compare anyOf(roleAttributes) with number 1`},
		{`anyOf(roleAttributes) = null`, 24, "never null"},
		{`count(roleAttributes) = "x"`, 24, `cannot compare count(roleAttributes) with string "x"`},
		{`count(roleAttributes) contains "x"`, 22, `does not apply to count(roleAttributes)`},
		{`sort by roleAttributes`, 8, `cannot sort by list field`},
	})
}

func TestError_BadSchemaIsAnErrorNotAPanic(t *testing.T) {
	s := &Schema{Fields: map[string]Field{
		"noget":   {Type: String},
		"nolist":  {Type: StringList},
		"weird":   {Type: FieldType(99), Get: func(any) any { return nil }},
		"dynamic": {Type: Any},
	}}
	for _, src := range []string{`noget = "x"`, `isEmpty(nolist)`, `weird = 1`, `dynamic = 1`, `sort by noget`, `sort by weird`, `sort by dynamic`} {
		if _, err := Compile(src, s); err == nil {
			t.Errorf("Compile(%q) with a broken schema succeeded", src)
		}
	}
}

func TestError_TooLong(t *testing.T) {
	long := `name = "` + strings.Repeat("x", MaxQueryLen) + `"`
	e := compileErr(t, long)
	if e.Pos != MaxQueryLen || !strings.Contains(e.Msg, "at most 4096") {
		t.Errorf("got %v", e)
	}
	// Exactly at the limit is fine.
	mustCompile(t, `name = "`+strings.Repeat("x", MaxQueryLen-9)+`"`)
}

func TestError_TooDeep(t *testing.T) {
	ok := strings.Repeat("(", MaxDepth) + "a = 1" + strings.Repeat(")", MaxDepth)
	mustCompile(t, ok)
	for _, src := range []string{
		strings.Repeat("(", MaxDepth+1) + "a = 1" + strings.Repeat(")", MaxDepth+1),
		strings.Repeat("not ", MaxDepth+1) + "a = 1",
		strings.Repeat("(not ", MaxDepth/2) + "a = 1" + strings.Repeat(")", MaxDepth/2) + " or " +
			strings.Repeat("not (", MaxDepth/2) + "isEmpty(roleAttributes)" + strings.Repeat(")", MaxDepth/2),
	} {
		if e := compileErr(t, src); !strings.Contains(e.Msg, "nested too deeply") {
			t.Errorf("Compile(%.40q...) = %v, want nesting error", src, e)
		}
	}
	e := compileErr(t, strings.Repeat("(", 100))
	if e.Pos != MaxDepth || !strings.Contains(e.Msg, "nested too deeply") {
		t.Errorf("got %v", e)
	}
}

func TestError_TenThousandParenthesesFailFast(t *testing.T) {
	for _, src := range []string{strings.Repeat("(", 10000), strings.Repeat("(", 4096), strings.Repeat("not ", 1000)} {
		start := time.Now()
		e := compileErr(t, src)
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%d bytes took %v", len(src), d)
		}
		if e.Pos > MaxQueryLen {
			t.Errorf("position %d", e.Pos)
		}
	}
}

func TestError_InListTooLong(t *testing.T) {
	items := strings.Repeat("1,", MaxListItems)
	mustCompile(t, "cost in ["+items[:len(items)-1]+"]")
	src := "cost in [" + items + "1]"
	e := compileErr(t, src)
	if e.Pos != len(src)-2 || !strings.Contains(e.Msg, "at most 1000") {
		t.Errorf("got %v", e)
	}
}
