package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/openai/openai-go/v3"
)

// FailureReason says in a few words why a call to a model failed, for the
// reader of an answer that had to do without it: the HTTP status it
// answered, or that it could not be reached, was cut off or was too slow.
// It names no endpoint, model or key, which the error itself does.
func FailureReason(err error) string {
	var api *openai.Error
	var dial *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &api):
		if text := http.StatusText(api.StatusCode); text != "" {
			return fmt.Sprintf("it answered %d %s", api.StatusCode, text)
		}
		return fmt.Sprintf("it answered with status %d", api.StatusCode)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "it did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dial) && dial.Op == "dial":
		return "it could not be reached"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return "the connection to it was cut"
	}
	return "its reply could not be used"
}
