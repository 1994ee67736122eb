package transport

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeChat feeds the chat completion decoder any body: it never
// panics, refuses with a request error, or yields a question that is not
// empty, with a history of user and assistant turns only.
func FuzzDecodeChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"vault-ask","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"vault-ask","stream":true,"stream_options":{"include_usage":true},"allow_web":true,"messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
		`{"model":"vault-ask","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null},{"role":"user","content":"b"}]}`,
		`{"model":"","messages":[]}`, `{`, `null`, `[]`, `{"messages":[{"role":"user","content":42}]}`, `{} {}`,
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`, `{"model":"m","allow_web":"yes","messages":[{"role":"user","content":"q"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, q, err := decodeChat(body)
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
	})
}
