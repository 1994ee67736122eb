package feed

import (
	"context"
	"net/url"
	"strings"

	"github.com/vaultask/vaultask/index"
)

// The index keeps the follower's checkpoint under the database's name as
// CouchDB knows it ("couchdb vault"), not under the URL it is reached by:
// http://127.0.0.1:5984, http://localhost:5984 and a proxy in front are the
// same database, and a checkpoint that followed the URL's spelling sent a
// changed spelling through a full scan, not ready meanwhile. Whether the
// database answering is the one the checkpoint was taken in is asked of
// the database itself once it answers (Follower.checkDatabase): its
// LiveSync identity, the _local documents LiveSync writes once per remote
// database (never replicated, and new when it rebuilds the remote), and
// then its sequence and the revisions the index holds. Neither CouchDB 3
// nor PouchDB gives a database an id of its own: CouchDB 3's
// instance_start_time is always "0", PouchDB's is its start time; the
// server's uuid (GET /) is the server's, the same for a database recreated
// under the same name, and CouchDB keeps it in its configuration, which a
// container recreated without its etc/local.d volume loses while the
// databases stay.

// sourceName is database db's name in the index's feed_state.
func sourceName(db string) string { return "couchdb " + db }

// formerSourceName reports whether name is how vaultask named database db in
// feed_state before it kept checkpoints by name: "couchdb ", the server's
// URL without credentials, "/" and the database's name.
func formerSourceName(db string) func(name string) bool {
	return func(name string) bool {
		root, ok := strings.CutPrefix(name, "couchdb ")
		if !ok {
			return false
		}
		if root, ok = strings.CutSuffix(root, "/"+db); !ok {
			return false
		}
		u, err := url.Parse(root)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	}
}

// adoptCheckpoint moves the checkpoint an earlier vaultask kept under a URL
// of a database of this name to the name, when the index has none under
// the name, so an upgrade resumes where it was (see the top of this file).
func (c *Couch) adoptCheckpoint(ctx context.Context, store *index.Feed) error {
	from, err := store.AdoptCheckpoint(ctx, c.source, formerSourceName(c.database()))
	if from != "" {
		c.log.Info("the index kept the feed's checkpoint under the server's URL: it is kept under the database's name from now on",
			keyWas, from, keyNow, c.source)
	}
	return err
}
