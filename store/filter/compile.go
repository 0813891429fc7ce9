package filter

// The compiler type-checks the AST against a Schema and turns it into
// closures. Every field name, getter and literal is resolved here, once, so
// that matching a record is a few indirect calls with no lookups.

type matchFunc func(rec any) bool

type compiler struct {
	s *Schema
	// env is what reference fields find their records in (CompileIn).
	env any
}

// resolve finds the field a name refers to (lookup).
func (c *compiler) resolve(ref fieldRef) (Field, *Error) {
	f, _, err := c.resolveVia(ref)
	return f, err
}

// resolveVia is resolve, also reporting a field read through a reference.
func (c *compiler) resolveVia(ref fieldRef) (Field, bool, *Error) {
	f, via, msg := c.lookup(c.s, ref.name, "", "", 0)
	if msg != "" {
		return Field{}, false, &Error{Pos: ref.pos, Msg: msg}
	}
	return f, via, nil
}

func (c *compiler) expr(n node) (matchFunc, *Error) {
	switch n := n.(type) {
	case *logicNode:
		fs := make([]matchFunc, len(n.kids))
		for i, k := range n.kids {
			f, err := c.expr(k)
			if err != nil {
				return nil, err
			}
			fs[i] = f
		}
		return logic(n.or, fs), nil
	case *notNode:
		f, err := c.expr(n.x)
		if err != nil {
			return nil, err
		}
		return func(rec any) bool { return !f(rec) }, nil
	case *isEmptyNode:
		get, err := c.list(n.field, fnIsEmpty)
		if err != nil {
			return nil, err
		}
		return func(rec any) bool { return len(get(rec)) == 0 }, nil
	case *cmpNode:
		return c.cmp(n)
	case *constNode:
		v := n.value
		return func(any) bool { return v }, nil
	}
	// Unreachable: the parser builds only the node types above.
	return nil, errorf(0, "internal error: unknown expression node %T", n)
}

// logic specializes the common two-operand case to avoid a loop.
func logic(or bool, fs []matchFunc) matchFunc {
	if len(fs) == 2 {
		a, b := fs[0], fs[1]
		if or {
			return func(rec any) bool { return a(rec) || b(rec) }
		}
		return func(rec any) bool { return a(rec) && b(rec) }
	}
	if or {
		return func(rec any) bool {
			for _, f := range fs {
				if f(rec) {
					return true
				}
			}
			return false
		}
	}
	return func(rec any) bool {
		for _, f := range fs {
			if !f(rec) {
				return false
			}
		}
		return true
	}
}

// list resolves the field of anyOf/allOf/count/isEmpty, which must be a list.
func (c *compiler) list(ref fieldRef, fn funcKind) (func(any) []string, *Error) {
	f, err := c.resolve(ref)
	if err != nil {
		return nil, err
	}
	if f.Type != StringList {
		return nil, errorf(ref.pos, "%s(...) needs a list field, but %q is a %s field", funcNames[fn], ref.name, f.Type)
	}
	get := listGetter(f)
	if get == nil {
		return nil, errorf(ref.pos, "field %q has no getter", ref.name)
	}
	return get, nil
}

func (c *compiler) cmp(n *cmpNode) (matchFunc, *Error) {
	if n.fn != fnNone {
		return c.listCmp(n)
	}
	f, err := c.resolve(n.field)
	if err != nil {
		return nil, err
	}
	subj := subject{typ: f.Type, nullable: true}
	subj.desc = f.Type.String() + " field " + quote(n.field.name)
	if f.Type == Any {
		subj.desc = "field " + quote(n.field.name)
	}
	var m matchFunc
	switch f.Type {
	case String:
		m, err = scalar(n, subj, stringGetter(f), stringPred)
	case Number:
		m, err = scalar(n, subj, numGetter(f), numPred)
	case Bool:
		m, err = scalar(n, subj, boolGetter(f), boolPred)
	case Time:
		m, err = scalar(n, subj, timeGetter(f), timePred)
	case Any:
		m, err = scalar(n, subj, dynGetter(f), dynPred)
	case StringList:
		return nil, errorf(n.field.pos, "field %q is a list: use anyOf(%s), allOf(%s), isEmpty(%s) or count(%s)",
			n.field.name, n.field.name, n.field.name, n.field.name, n.field.name)
	default:
		return nil, errorf(n.field.pos, "field %q has an unknown type", n.field.name)
	}
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errorf(n.field.pos, "field %q has no getter", n.field.name)
	}
	return m, nil
}

func (c *compiler) listCmp(n *cmpNode) (matchFunc, *Error) {
	get, err := c.list(n.field, n.fn)
	if err != nil {
		return nil, err
	}
	desc := funcNames[n.fn] + "(" + n.field.name + ")"
	if n.fn == fnCount {
		count := func(rec any) (num, bool) { return num{i: int64(len(get(rec)))}, true }
		return scalar(n, subject{typ: Number, desc: desc}, count, numPred)
	}
	if err := checkOp(n, subject{typ: String, desc: desc}); err != nil {
		return nil, err
	}
	pred, _, err := stringPred(n, subject{typ: String, desc: desc})
	if err != nil {
		return nil, err
	}
	if n.neg {
		p := pred
		pred = func(s string) bool { return !p(s) }
	}
	if n.fn == fnAllOf {
		return func(rec any) bool {
			for _, s := range get(rec) {
				if !pred(s) {
					return false
				}
			}
			return true
		}, nil
	}
	return func(rec any) bool {
		for _, s := range get(rec) {
			if pred(s) {
				return true
			}
		}
		return false
	}, nil
}

// subject is what the left side of a comparison is, for type checks.
type subject struct {
	typ      FieldType
	desc     string // `string field "name"`, `anyOf(roles)`: for messages
	nullable bool
}

// checkOp rejects operators the subject's type does not support, and null
// where it means nothing.
func checkOp(n *cmpNode, s subject) *Error {
	op := n.op.name(n.neg)
	switch {
	case (n.op == opContains || n.op == opIContains) && s.typ != String && s.typ != Any:
		return errorf(n.opPos, "operator %q does not apply to %s: it needs a string", op, s.desc)
	case n.op.ordering() && s.typ == Bool:
		return errorf(n.opPos, "operator %q does not apply to %s: it needs numbers, strings or datetimes", op, s.desc)
	}
	for _, l := range n.vals {
		if l.kind != litNull {
			continue
		}
		if !s.nullable {
			return errorf(l.pos, "%s is never null and cannot be compared with null", s.desc)
		}
		if n.op != opEq && n.op != opIn {
			return errorf(l.pos, `null can only be used with "=", "!=", "in" and "not in", not with %q`, op)
		}
	}
	return nil
}
