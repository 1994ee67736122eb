package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FailureReason says why a streamed answer failed, for each way a model
// server fails, and never names where it is.
func TestFailureReason(t *testing.T) {
	for name, tc := range map[string]struct {
		handler http.HandlerFunc
		want    string
	}{
		"status": {func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"no"}}`, http.StatusServiceUnavailable)
		}, "it answered 503 Service Unavailable"},
		"slow": {func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leave
			<-r.Context().Done()
		}, "it did not answer in time"},
		"cut": {func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, "the connection to it was cut"},
		"unreachable": {nil, "it could not be reached"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			if tc.handler == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			c, err := NewClient("ollama/fake", Options{BaseURL: srv.URL + "/v1", Getenv: func(string) string { return "" }, MaxRetries: -1, Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Stream(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hello"}}}, func(string) error { return nil })
			if err == nil {
				t.Fatal("the stream did not fail")
			}
			got := FailureReason(err)
			if got != tc.want || strings.Contains(got, "127.0.0.1") {
				t.Fatalf("FailureReason(%v) = %q, want %q", err, got, tc.want)
			}
		})
	}
}
