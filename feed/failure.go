package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
)

// failure is a failed request to CouchDB described for the person running
// vaultask: what is wrong in words they can act on, and its kind, so that a
// follower warns once when the kind of failure changes rather than at every
// retry of the same one.
type failure struct {
	kind string
	text string
}

// Kinds of failure.
const (
	failUnauthorized = "unauthorized"
	failForbidden    = "forbidden"
	failNoDatabase   = "no database"
	failUnreachable  = "unreachable"
	failDropped      = "dropped"
	failSilent       = "silent"
	failServer       = "server error"
	failEmpty        = "empty database"
	failPassphrase   = "passphrase"
	failOther        = "other"
)

// describe says what err means for this database.
func (c *Couch) describe(err error) failure {
	status := 0
	var withStatus interface{ HTTPStatus() int }
	if errors.As(err, &withStatus) {
		status = withStatus.HTTPStatus()
	}
	switch {
	case status == http.StatusUnauthorized || errors.Is(err, ErrUnauthorized):
		if c.user == "" {
			return failure{failUnauthorized, fmt.Sprintf("CouchDB at %s requires a login (401 unauthorized), and no user is configured", c.root)}
		}
		return failure{failUnauthorized, fmt.Sprintf("CouchDB rejected the credentials for user %q (401 unauthorized): was the password changed?", c.user)}
	case status == http.StatusForbidden:
		return failure{failForbidden, fmt.Sprintf("CouchDB does not let user %q read database %q (403 forbidden)", c.user, c.database())}
	case status == http.StatusNotFound:
		return failure{failNoDatabase, fmt.Sprintf("database %q does not exist at %s (404 not found): deleted, or being rebuilt?", c.database(), c.root)}
	case status >= 500 && status != http.StatusBadGateway:
		return failure{failServer, fmt.Sprintf("CouchDB at %s failed (%d %s): %v", c.root, status, http.StatusText(status), err)}
	}
	var netErr net.Error
	var opErr *net.OpError
	var empty *emptyDatabaseError
	switch {
	case errors.As(err, &empty):
		return failure{failEmpty, empty.Error()}
	case errors.Is(err, ErrEncryptedVault):
		return failure{failPassphrase, err.Error()}
	case errors.Is(err, syscall.ECONNREFUSED):
		return failure{failUnreachable, fmt.Sprintf("CouchDB at %s is unreachable: connection refused (not running, or another port?)", c.root)}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return failure{failUnreachable, fmt.Sprintf("CouchDB at %s is unreachable: %v", c.root, opErr.Err)}
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return failure{failSilent, fmt.Sprintf("CouchDB at %s sent nothing, not even a heartbeat, for %s: the connection is dead", c.root, 3*c.heartbeat)}
	case errors.Is(err, errFeedEnded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), status == http.StatusBadGateway:
		return failure{failDropped, fmt.Sprintf("the connection to CouchDB at %s was closed (the server restarted, or a proxy dropped it): %v", c.root, err)}
	case errors.Is(err, context.DeadlineExceeded):
		return failure{failSilent, fmt.Sprintf("a request to CouchDB at %s timed out: %v", c.root, err)}
	}
	return failure{failOther, err.Error()}
}
