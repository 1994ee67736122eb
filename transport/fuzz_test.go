package transport

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/transport/allowweb"
)

// FuzzDecodeChat feeds the chat completion decoder any body and URL query:
// it never panics, refuses with a request error, or yields a question that
// is not empty, with a history of user and assistant turns only, a
// max_tokens that is 0 (none) or one the request gave, from a query of
// allow_web alone, and open notes only whenever the query or the body (as
// encoding/json reads it) asks for them.
func FuzzDecodeChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"vault-ask","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"vault-ask","stream":true,"stream_options":{"include_usage":true},"allow_web":true,"messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"model":"vault-ask","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null},{"role":"user","content":"b"}]}`,
		`{"model":"","messages":[]}`, `{`, `null`, `[]`, `{"messages":[{"role":"user","content":42}]}`, `{} {}`,
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`, `{"model":"m","allow_web":"yes","messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","n":3,"messages":[{"role":"user","content":"q"}]}`, `{"model":"m","n":1,"max_tokens":-5,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","max_tokens":50,"max_completion_tokens":40,"messages":[{"role":"user","content":"q"}]}`, `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","tools":[],"tool_choice":{"type":"function","function":{"name":"f"}},"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","tool_choice":"auto","response_format":{"type":"text"},"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","response_format":{"type":"json_schema","json_schema":{}},"n":null,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","functions":[{"name":"f"}],"function_call":{"name":"f"},"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","functions":[],"function_call":"auto","logprobs":false,"top_logprobs":0,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","logprobs":true,"top_logprobs":5,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"m","modalities":"audio","functions":{},"messages":[{"role":"user","content":"q"}]}`,
	} {
		f.Add([]byte(s), "")
	}
	ask := `{"model":"vault-ask","messages":[{"role":"user","content":"q"}]}`
	askOpen := `{"model":"vault-ask","allow_web":true,"messages":[{"role":"user","content":"q"}]}`
	askAll := `{"model":"vault-ask","allow_web":false,"messages":[{"role":"user","content":"q"}]}`
	for _, c := range [][2]string{{ask, "allow_web=true"}, {ask, "ALLOW_WEB=true"}, {ask, "allow_web=1"}, {askAll, "allow_web=true"},
		{askOpen, "allow_web=false"}, {askOpen, "allow_web=true"}, {ask, "x=1"}, {ask, "allow_web=true&api-version=1"}, {ask, "allow%5Fweb=true&"}} {
		f.Add([]byte(c[0]), c[1])
	}
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		req, q, err := decodeChat(body, query)
		var bad *requestError
		if err != nil {
			if !errors.As(err, &bad) || bad.msg == "" {
				t.Fatalf("decodeChat error %v is not a request error with a message", err)
			}
			return
		}
		if strings.TrimSpace(q.Text) == "" {
			t.Fatalf("empty question accepted from %q", body)
		}
		for _, turn := range q.History {
			if turn.Role != "user" && turn.Role != "assistant" {
				t.Fatalf("history turn %+v from %q", turn, body)
			}
		}
		if q.MaxTokens != 0 && (req.MaxTokens == nil || *req.MaxTokens != q.MaxTokens) && (req.MaxCompletionTokens == nil || *req.MaxCompletionTokens != q.MaxTokens) {
			t.Fatalf("max_tokens %d from %q", q.MaxTokens, body)
		}
		params, _ := url.ParseQuery(query)
		for name := range params {
			if name != allowweb.Name {
				t.Fatalf("the query %q was accepted with %q in it", query, name)
			}
		}
		var lenient struct {
			AllowWeb *bool `json:"allow_web"`
		}
		_ = json.Unmarshal(body, &lenient)
		fromQuery, fromBody := params.Get(allowweb.Name), lenient.AllowWeb
		if fromQuery != "" && fromBody != nil && fromQuery != strconv.FormatBool(*fromBody) {
			t.Fatalf("allow_web=%s in the query and %v in the body %q were accepted", fromQuery, *fromBody, body)
		}
		if want := fromQuery == "true" || fromBody != nil && *fromBody; q.AllowWeb != want {
			t.Fatalf("allow_web read as %v from the query %q and the body %q", q.AllowWeb, query, body)
		}
	})
}

// FuzzDecodeChange feeds PUT /admin/config's decoder any body: it never
// panics, refuses with a field error that has a message, or yields at most
// maxChangeKeys distinct keys, each with a string, number or boolean, that
// encode back to a body decoding to the same change.
func FuzzDecodeChange(f *testing.F) {
	for _, s := range []string{
		`{"retrieval":{"final_top_k":6}}`, `{"models":{"generation":"ollama/x","rerank":""},"web":{"enabled":true}}`,
		`{"retrieval":{"fts_weight":1.5e0}}`, `{"a":{"b":null}}`, `{"a":{"b":[1]}}`, `{"a":{"b":1,"b":2}}`, `{"a":1}`,
		`{}`, `{"a":{}}`, `[]`, `null`, `{`, `{} {}`, `{"a":{"b":"\u00e9"}}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		changes, err := decodeChange(body)
		if err != nil {
			var fe *fieldError
			if !errors.As(err, &fe) || fe.Message == "" {
				t.Fatalf("decodeChange error %v is not a field error with a message", err)
			}
			return
		}
		if len(changes) > maxChangeKeys {
			t.Fatalf("%d keys accepted", len(changes))
		}
		doc := map[string]map[string]any{}
		seen := map[string]bool{}
		for _, c := range changes {
			if seen[c.path] {
				t.Fatalf("%s twice from %q", c.path, body)
			}
			seen[c.path] = true
			switch c.value.(type) {
			case string, json.Number, bool:
			default:
				t.Fatalf("%s = %#v from %q", c.path, c.value, body)
			}
			section, key, _ := strings.Cut(c.path, ".")
			if doc[section] == nil {
				doc[section] = map[string]any{}
			}
			doc[section][key] = c.value
		}
		text, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeChange(text)
		if err != nil || len(again) != len(changes) {
			t.Fatalf("re-encoded %q: %v, %d keys, want %d", text, err, len(again), len(changes))
		}
	})
}
