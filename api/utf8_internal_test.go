package api

import "testing"

func TestInvalidUTF8Field(t *testing.T) {
	t.Parallel()
	bad := "\xff\xfe"
	for body, want := range map[string]string{
		`{"name":"` + bad + `"}`:                                "name",
		`{"a":1,"tags":{"x":"ok","team":"` + bad + `"}}`:        "tags.team",
		`{"roleAttributes":["a","b","` + bad + `"],"name":"x"}`: "roleAttributes[2]",
		`{"o":{"p":[{"q":"ok"},{"q":"` + bad + `"}]}}`:          "o.p[1].q",
		`{"` + bad + `":1}`:                                     "\uFFFD\uFFFD", // the key as decoded
		`{"name":"fine","after":{"k":"v"},"z":"` + bad + `"}`:   "z",
		`"` + bad + `"`: "body",
		`{"a":[1,2,{"b":[true,null,"x"]}],"c":"` + bad + `"}`: "c",
	} {
		if got := invalidUTF8Field([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
