package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Every error goes out in one shape, byte for byte: OpenAI's, a missing
// param or code as null, a message with <, > and & as written.
func TestWriteErrorShape(t *testing.T) {
	for _, c := range []struct {
		status int
		err    apiError
		want   string
	}{
		{http.StatusUnauthorized, apiError{Type: invalidRequest, Message: "missing API key: send Authorization: Bearer <VAULTASK_API__KEY> & retry"},
			`{"error":{"message":"missing API key: send Authorization: Bearer <VAULTASK_API__KEY> & retry","type":"invalid_request_error","param":null,"code":null}}` + "\n"},
		{http.StatusBadRequest, apiError{Type: invalidRequest, Param: "allow_web", Message: `allow_web="x": want true or false`},
			`{"error":{"message":"allow_web=\"x\": want true or false","type":"invalid_request_error","param":"allow_web","code":null}}` + "\n"},
		{http.StatusTooManyRequests, apiError{Type: rateLimited, Code: "busy", Message: "busy"},
			`{"error":{"message":"busy","type":"rate_limit_error","param":null,"code":"busy"}}` + "\n"},
		{http.StatusNotFound, apiError{Type: invalidRequest, Param: "model", Code: "model_not_found", Message: "no"},
			`{"error":{"message":"no","type":"invalid_request_error","param":"model","code":"model_not_found"}}` + "\n"},
		{http.StatusInternalServerError, apiError{Type: serverFault, Message: "internal error"},
			`{"error":{"message":"internal error","type":"server_error","param":null,"code":null}}` + "\n"},
	} {
		rec := httptest.NewRecorder()
		writeError(rec, c.status, c.err)
		if rec.Code != c.status || rec.Body.String() != c.want || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("writeError(%d, %+v) = %d %s %q, want %d %q", c.status, c.err, rec.Code, rec.Header().Get("Content-Type"), rec.Body, c.status, c.want)
		}
	}
}
