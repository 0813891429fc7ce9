package api

import (
	"edgectl/store"
)

// ref is a typed EntityRef: {_links, entity, id, name}.
type ref struct {
	Links  selfLink `json:"_links"`
	Entity string   `json:"entity"`
	ID     string   `json:"id"`
	Name   string   `json:"name"`
}

func (s *Server) typedRef(tx *store.Tx, k *store.Kind, path, id string) *ref {
	if id == "" {
		return nil
	}
	r := &ref{Links: linkTo(path, id), Entity: path, ID: id}
	if rec, err := tx.Get(k, id); err == nil {
		r.Name = rec.RecordName()
	}
	return r
}

func objOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func intMapOrEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func strMapOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilStrings(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func tagsOrEmpty(t map[string]any) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	return t
}

// entityRef is the EntityRef of a record: {_links, entity, id, name}.
func (s *Server) entityRef(tx *store.Tx, k *store.Kind, path, id string) map[string]any {
	if id == "" {
		return nil
	}
	name := ""
	if r, err := tx.Get(k, id); err == nil {
		name = r.RecordName()
	}
	return map[string]any{"_links": selfLinks(path, id), "entity": path, "id": id, "name": name}
}

// namedView shows a record that has only the base fields and a name.
func namedView(r store.Record, path string) map[string]any { return namedRecordView(r, path, nil) }

// namedRecordView starts the view of a named record: its links (self, and
// the related lists named), id, times, tags and name.
func namedRecordView(r store.Record, path string, tags map[string]any, related ...string) map[string]any {
	id := r.GetID()
	l := selfLinks(path, id)
	for _, rel := range related {
		l[rel] = map[string]string{"href": "./" + path + "/" + id + "/" + rel}
	}
	return map[string]any{"_links": l, "id": id, "createdAt": created(r), "updatedAt": updated(r),
		"tags": tagsOrEmpty(tags), "name": r.RecordName()}
}

func created(r store.Record) any { return store.BaseOf(r).CreatedAt }

func updated(r store.Record) any { return store.BaseOf(r).UpdatedAt }
