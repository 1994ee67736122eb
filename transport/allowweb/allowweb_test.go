package allowweb

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// Query strings: allow_web once, true or false exactly; any other spelling
// of it, a repeat, or a query that cannot be read is an error naming it.
func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
		bad   bool
	}{
		{"", false, false},
		{"state=indexed&path=x", false, false},
		{"allow_web=true", true, false},
		{"allow_web=false", false, false},
		{"path=a%26b&allow_web=true&limit=3", true, false},
		{"allow%5Fweb=true", true, false},
		{"allowance=true&web=x", false, false},
		{"allow_webs=true", false, false},
		{"ALLOW_WEB=true", false, true},
		{"Allow_Web=true", false, true},
		{"allowWeb=true", false, true},
		{"allow-web=true", false, true},
		{"allow_web+=true", false, true},
		{"allow%5FWEB=true", false, true},
		{"allow_web=true&ALLOW_WEB=false", false, true},
		{"allow_web=true&allow_web=true", false, true},
		{"allow_web", false, true},
		{"allow_web=", false, true},
		{"allow_web=TRUE", false, true},
		{"allow_web=1", false, true},
		{"allow_web=yes", false, true},
		{"allow_web=true;", false, true},
		{"x=1;allow_web=true", false, true},
		{"allow_web=%ZZ", false, true},
		{"allow_w%ZZeb=true", false, true},
	} {
		got, err := Query(tc.query)
		if tc.bad {
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Errorf("Query(%q) = %v, %v; want an error naming allow_web", tc.query, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Query(%q) = %v, %v; want %v", tc.query, got, err, tc.want)
		}
	}
}

// JSON objects: allow_web once, a JSON boolean; any other spelling of it
// (escapes decoded as encoding/json decodes them) or a repeat is an error
// naming it.
func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
		bad  bool
	}{
		{``, false, false},
		{`null`, false, false},
		{`{}`, false, false},
		{`{"allow_web":true}`, true, false},
		{`{"allow_web":false}`, false, false},
		{`{"messages":[{"allow_web":true}],"allow_web":false}`, false, false},
		{`{"nested":{"ALLOW_WEB":false},"allow_web":true}`, true, false},
		{` {"allow\u005fweb" : true} `, true, false},
		{`{"Allow_Web":true}`, false, true},
		{`{"ALLOW_WEB":false}`, false, true},
		{`{"allowWeb":true}`, false, true},
		{`{"\u0041llow_web":true}`, false, true},
		{`{"allow_web":true,"ALLOW_WEB":false}`, false, true},
		{`{"allow_web":true,"allow_web":false}`, false, true},
		{`{"allow_web":"true"}`, false, true},
		{`{"allow_web":1}`, false, true},
		{`{"allow_web":null}`, false, true},
		{`{"allow_web":{}}`, false, true},
		{`[]`, false, true},
		{`"allow_web"`, false, true},
		{`{"allow_web":tru}`, false, true},
		{`{"a":`, false, true},
	} {
		got, err := JSON([]byte(tc.body))
		if tc.bad {
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Errorf("JSON(%s) = %v, %v; want an error naming allow_web", tc.body, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("JSON(%s) = %v, %v; want %v", tc.body, got, err, tc.want)
		}
	}
}

// FuzzQuery: any query string is read without a panic, refused with
// an error naming allow_web, or read as url.ParseQuery reads it, where no
// name but allow_web itself is allow_web in any case and it came at most
// once, as true or false.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "allow_web=true", "allow_web=false&x=1", "ALLOW_WEB=true", "allow_web=true&allow_web=true", "allow_web=TRUE",
		"allow%5Fweb=true", "allow_web=true;", "a=%ZZ", "allowWeb=1", "allow_web", "=&&=", "allow+web=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		got, err := Query(query)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Fatalf("Query(%q): %v is not an error naming allow_web", query, err)
			}
			return
		}
		q, _ := url.ParseQuery(query) // the pairs it can read: a pair of another name may hold a bad escape
		for name, vs := range q {
			if strings.EqualFold(name, "allow_web") && (name != "allow_web" || len(vs) != 1 || vs[0] != "true" && vs[0] != "false") {
				t.Fatalf("Query(%q) = %v, but the query has %s=%q", query, got, name, vs)
			}
		}
		if want := q.Get("allow_web") == "true"; got != want {
			t.Fatalf("Query(%q) = %v, want %v", query, got, want)
		}
	})
}

// FuzzJSON: any bytes are read without a panic, refused with an
// error naming allow_web, or read as the lenient reader, encoding/json,
// reads allow_web from them whenever it can: no spelling or repeat makes
// the two disagree.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"allow_web":true}`, `{"allow_web":false,"x":[1,{"allow_web":true}]}`, `{"ALLOW_WEB":true}`,
		`{"allow_web":true,"allow_web":false}`, `{"allow\u005fweb":true}`, `{"\u0061llow_WEB":false}`, `null`, `[]`, `{}`, ``,
		`{"allow_web":"true"}`, `{"allow_web":true} {"allow_web":false}`, `{"allowweb":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := JSON(body)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "allow_web") {
				t.Fatalf("JSON(%q): %v is not an error naming allow_web", body, err)
			}
			return
		}
		var lenient struct {
			AllowWeb *bool `json:"allow_web"`
		}
		if json.Unmarshal(body, &lenient) != nil {
			return
		}
		if want := lenient.AllowWeb != nil && *lenient.AllowWeb; got != want {
			t.Fatalf("JSON(%q) = %v, encoding/json reads %v", body, got, want)
		}
	})
}
